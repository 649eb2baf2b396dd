package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// InBrand reports whether domain is the brand's domain or one of its
// subdomains: the label and annotation prefixes and the API groups that
// docs/api.md reserves for the service.
func InBrand(domain, brand string) bool {
	return domain == brand || strings.HasSuffix(domain, "."+brand)
}

// ReservedGroup reports whether an API group belongs to the service: the
// empty group (served under /api) and the groups in the brand's domain.
func ReservedGroup(group, brand string) bool {
	return group == "" || InBrand(group, brand)
}

// DefaultBrand is the brand the service's own schemas name (schemas/): a
// service model whose group is under it moves to the configured brand at
// start (Model.Rebrand).
const DefaultBrand = "svc.run"

// ToBrand moves domain, written against DefaultBrand, to brand: the
// brand's domain or a subdomain of it becomes the same under brand
// (plugin.svc.run → plugin.halo.run). Any other domain is returned as it
// is, with moved false.
func ToBrand(domain, brand string) (_ string, moved bool) {
	if !InBrand(domain, DefaultBrand) {
		return domain, false
	}
	return strings.TrimSuffix(domain, DefaultBrand) + brand, true
}

// Rebrand moves m, a service model declared under DefaultBrand, to brand:
// a group under DefaultBrand becomes the same group under brand (the
// empty group stays), in m.Group and in x-svc-model of m.Schema, so the
// published document names the group the model is served under.
func (m *Model) Rebrand(brand string) error {
	group, moved := ToBrand(m.Group, brand)
	if !moved || brand == DefaultBrand {
		return nil
	}
	if m.Schema != nil {
		schema, err := schemaWithGroup(m.Schema, group)
		if err != nil {
			return fmt.Errorf("model %s: schema: %w", m.Kind, err)
		}
		m.Schema = schema
	}
	m.Group = group
	return nil
}

// schemaWithGroup rewrites x-svc-model.group of a model schema.
func schemaWithGroup(schema []byte, group string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, err
	}
	raw, ok := doc["x-svc-model"]
	if !ok {
		return schema, nil
	}
	var ext map[string]any
	if err := json.Unmarshal(raw, &ext); err != nil {
		return nil, err
	}
	ext["group"] = group
	raw, err := json.Marshal(ext)
	if err != nil {
		return nil, err
	}
	doc["x-svc-model"] = raw
	return json.Marshal(doc)
}
