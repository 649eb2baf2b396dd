package store

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/durable/etcd"
	"github.com/svcrun/svc/runtime/store/internal/index"
)

// ErrNotEmpty is a migration refused because the etcd prefix already
// holds data.
var ErrNotEmpty = errors.New("the etcd prefix is not empty")

// MigrateToEtcd copies every object of the data directory dir (its server
// stopped: the directory lock is taken) into the etcd prefix of eo, and
// returns the count per table (model storage key). It refuses a prefix
// that holds anything unless force. Each table is marked so that the
// first replica that indexes its model writes its unique-value claims
// (syncClaims): the copy does not know the models.
func MigrateToEtcd(ctx context.Context, dir string, eo EtcdOptions, force bool) (map[string]int, error) {
	src, err := Load(Options{Dir: dir})
	if err != nil {
		return nil, fmt.Errorf("migrate: open %s: %w", dir, err)
	}
	defer src.Close()
	dst, err := etcd.Open(eo)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer dst.Close()
	empty, err := dst.Empty(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if !empty && !force {
		return nil, fmt.Errorf("migrate: %s on %v: %w (pass --force to write into it anyway)", dst.Prefix(), eo.Endpoints, ErrNotEmpty)
	}
	counts := map[string]int{}
	tables := *src.tables.Load()
	keys := make([]string, 0, len(tables))
	for k := range tables {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		recs, err := index.AllRecords(tables[key].state.Load().db)
		if err != nil {
			return counts, fmt.Errorf("migrate: read %s: %w", key, err)
		}
		names := make([]string, len(recs))
		values := make([][]byte, len(recs))
		for i, r := range recs {
			names[i], values[i] = r.Name, encodePut(key, r)
		}
		if err := dst.Copy(ctx, key, names, values); err != nil {
			return counts, fmt.Errorf("migrate: copy %s: %w", key, err)
		}
		if err := dst.MarkClaimSync(ctx, key); err != nil {
			return counts, fmt.Errorf("migrate: %w", err)
		}
		counts[key] = len(recs)
	}
	return counts, nil
}

// syncClaims writes the unique-value claims of a model's objects when a
// migration left them to do (MigrateToEtcd); otherwise one read.
func (s *Store) syncClaims(ctx context.Context, m *model.Model, st *tableState) error {
	unique := false
	for _, ix := range m.Indexes {
		unique = unique || ix.Unique
	}
	if !unique {
		return nil
	}
	pending, err := s.shared.ClaimSyncPending(ctx, m.StorageKey())
	if err != nil || !pending {
		return err
	}
	claims := map[string]string{}
	for rec := range st.byName.all {
		for key := range s.claims(m, rec) {
			claims[key] = rec.Name
		}
	}
	n, conflicts, err := s.shared.SyncClaims(ctx, m.StorageKey(), claims)
	if len(conflicts) > 0 {
		s.log.Error("unique values held by two objects after a migration; the later writer of each loses", "model", m.GVK().String(), "claims", conflicts)
	}
	s.log.Info("unique-value claims written after a migration", "model", m.GVK().String(), "claims", n)
	return err
}
