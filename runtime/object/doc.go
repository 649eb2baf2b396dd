// Package object holds the object envelope shared by every model: type
// information, metadata, the Object interface that typed (generated) models
// satisfy by embedding Envelope, the name and label syntax rules, and field
// errors that carry a path.
//
// It knows nothing about storage or HTTP; the store, the HTTP layer and
// generated validators call it.
package object
