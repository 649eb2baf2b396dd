package api

// DecodeFast is decodeFast, for the external tests.
var DecodeFast = decodeFast
