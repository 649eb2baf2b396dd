// Package model describes the kinds the service serves: their identity
// (group, version, kind, plural, singular), their indexes with the
// order-preserving key encodings that make index order the values' natural
// order, and a registry to look models up by kind or by URL resource.
//
// It holds no objects; runtime/store builds tables from these descriptions,
// and the HTTP layer finds routes through the Registry.
package model
