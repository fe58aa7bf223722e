// Package openapi is the OpenAPI connector: every operation of an OpenAPI
// document (3.0, 3.1 or Swagger 2.0; JSON or YAML; a file or a URL) becomes
// a typed method of one sandbox global, called over HTTP with the
// connector's credentials.
package openapi
