package server

import mcpserver "github.com/mark3labs/mcp-go/server"

// MCP returns the underlying mcp-go server, for in-process clients.
func (s *Server) MCP() *mcpserver.MCPServer { return s.mcp }

// TaskListPage is how many tasks one tasks/list answer holds at most.
const TaskListPage = taskListPage

// MaxSessions bounds the streamable-HTTP sessions remembered at once.
const MaxSessions = maxSessions

// MaxPersonSessions bounds the sessions of one person under an issuer.
const MaxPersonSessions = maxPersonSessions

// Engine is the runtime s drives.
func (s *Server) Engine() Engine { return s.rt }

// MaxWaitingAnswers bounds the answers waiting to be written on stdio.
const MaxWaitingAnswers = maxWaitingAnswers

// MaxWaitingBytes bounds the bytes of the answers waiting to be written.
const MaxWaitingBytes = maxWaitingBytes
