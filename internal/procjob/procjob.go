// Package procjob ties a child process's life to ours on Windows, where
// there is no parent-death signal: a Job Object that kills every process
// in it when its last handle closes, which happens when the owner
// releases it or when the owner's process exits, however it exits.
// Processes the child starts after it is in the job are in it too.
// Elsewhere Contain does nothing (process groups and the parent-death
// signal do this work there).
package procjob
