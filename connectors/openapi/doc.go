// Package openapi is the OpenAPI connector: every operation of an OpenAPI
// document (3.0, 3.1 or Swagger 2.0; JSON or YAML; a file or a URL) becomes
// a typed method of one sandbox global, called over HTTP with the
// connector's credentials.
//
// # How a document becomes methods
//
//   - load.go reads the document (a URL is fetched, with its ETag, and kept
//     in the cache directory; offline the kept copy is used, with a
//     warning) and converts YAML to JSON.
//   - value.go parses the JSON into an ordered tree (internal/jsontext), and
//     derive.go walks it: one derivedMethod per operation, in document
//     order, with the HTTP plan of the call (model.go's Operation) and the
//     tool the sandbox sees (input and output JSON Schemas, description).
//     Swagger 2.0 is read by the same walk (body and formData parameters,
//     collectionFormat, produces/consumes, host/basePath), not converted
//     first.
//   - schema.go turns the document's schema dialect (3.0's nullable and
//     boolean exclusive bounds, 2.0's file type, 3.1's JSON Schema) into
//     JSON Schema 2020-12, which both the argument validator and typegen
//     read. Shared schemas (#/components/schemas/NAME, 2.0's
//     #/definitions/NAME) stay references into the connector's
//     definitions (connectors.Capabilities) instead of being copied into every
//     method: GitHub's 1,223 operations share 618 of them, and copying
//     would multiply the validator's, the fingerprint's and typegen's work.
//     A reference to any other place that itself refers to others becomes
//     a shared schema named after its place; copied in place, such
//     references can grow exponentially (Azure's documents do).
//   - connector.go names the methods (operationId made an identifier, or
//     method and path), applies the operation filter, skips collisions and
//     the reserved names request and spec with warnings, and assembles the
//     definitions the kept methods need.
//   - cache.go keeps each derivation on disk, keyed by the document's
//     SHA-256, the binary's build and deriveFormat; a file whose size, inode
//     and times match the cache's record is not even read on a warm start.
//
// Why not a general OpenAPI library: on GitHub's 13 MB document,
// kin-openapi's loader alone takes 2.3-3.8 s (and v0.153 four times the
// memory of v0.152), libopenapi about 1-1.5 s with its schemas built, while
// this walk parses and derives the whole document, output types included,
// in about 0.3 s (BENCHMARKS.md). Real documents are often not strictly
// valid, so nothing here validates the document: what cannot be used is
// skipped with a warning that check prints, and schema keywords of the
// wrong type are dropped so the schemas still compile.
//
// # How a call is made
//
// call.go, params.go, body.go and response.go build the request from the
// method's one argument object (parameters by style and explode, bodies
// by media type), send it with the credentials (auth.go, oauth.go),
// follow redirects only on the same origin, cap the answer and decode it
// by its Content-Type. A non-2xx answer is the method's error, whose Value
// (HTTPError) becomes the thrown Error's status and body. request.go is
// the generic request method. Everything the connector returns passes
// through the scrubber, which holds every credential and every token the
// connector obtains.
package openapi
