package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
)

// DefaultServiceName is the service.name of what is exported when neither
// the configuration nor OTEL_SERVICE_NAME names one.
const DefaultServiceName = "codemode-mcp"

// newResource describes this process: service.name (serviceName, else
// OTEL_SERVICE_NAME, else DefaultServiceName) and
// OTEL_RESOURCE_ATTRIBUTES.
func newResource(ctx context.Context, serviceName string) (*resource.Resource, error) {
	opts := []resource.Option{
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithFromEnv(), // later options win
	}
	if serviceName != "" {
		opts = append(opts, resource.WithAttributes(attribute.String("service.name", serviceName)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: describe the service: %w", err)
	}
	// A partial resource (a malformed OTEL_RESOURCE_ATTRIBUTES) is used as
	// it is: the specification says to go on.
	return res, nil
}
