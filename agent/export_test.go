package agent

import "time"

// FailLogWritesPast makes every write of a's session logs that would take
// a log past limit bytes stop halfway with err, as a full disk does; a
// limit below 0 ends it.
func FailLogWritesPast(a *Agent, limit int64, err error) {
	var fault func(off int64, n int) error
	if limit >= 0 {
		fault = func(off int64, n int) error {
			if off+int64(n) > limit {
				return err
			}
			return nil
		}
	}
	a.mu.Lock()
	a.logFault = fault
	sess := a.sess
	a.mu.Unlock()
	if sess != nil {
		sess.log.mu.Lock()
		sess.log.fault = fault
		sess.log.mu.Unlock()
	}
}

// SetDiscoveryRetry sets discovery's first wait between attempts.
func SetDiscoveryRetry(a *Agent, d time.Duration) {
	a.mu.Lock()
	a.eng.retryBase = d
	a.mu.Unlock()
}

// SetLogFault gives fault to the session logs a opens from now on: it is
// asked before each write (see FailLogWritesPast).
func SetLogFault(a *Agent, fault func(off int64, n int) error) {
	a.mu.Lock()
	a.logFault = fault
	a.mu.Unlock()
}
