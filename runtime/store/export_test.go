package store

// EncodePutForTest lets benchmarks write data directories directly.
func EncodePutForTest(table, name string, version int64, data []byte) []byte {
	return encodePut(table, &Record{Name: name, Version: version, Data: data})
}
