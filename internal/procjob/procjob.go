// Package procjob ties a child process's life to ours on Windows, where
// there is no parent-death signal: a Job Object that kills every process
// in it when its last handle closes, which happens when the owner
// releases it or when the owner's process exits, however it exits.
// Processes the child starts after it is in the job are in it too.
// Only Windows builds have Contain, and only Windows files call it:
// elsewhere process groups and the parent-death signal do this work.
package procjob
