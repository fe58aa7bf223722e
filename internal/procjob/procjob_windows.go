package procjob

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Contain puts p in a Job Object of its own with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and, when memoryLimit is positive, a
// limit of that many bytes on each process's committed memory (past it
// allocations fail). release closes the job, which kills whatever still
// runs in it; the system closes it too when this process exits.
func Contain(p *os.Process, memoryLimit int64) (release func(), err error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create a job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if memoryLimit > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_PROCESS_MEMORY
		info.ProcessMemoryLimit = uintptr(memoryLimit)
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("set the job object's limits: %w", err)
	}
	// The os.Process holds the process's handle, so its pid cannot have
	// been reused.
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("open process %d: %w", p.Pid, err)
	}
	err = windows.AssignProcessToJobObject(job, h)
	windows.CloseHandle(h)
	if err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("assign process %d to its job object: %w", p.Pid, err)
	}
	return func() { windows.CloseHandle(job) }, nil
}
