//go:build cuvil_capi

package main

// C helpers of the C API that must not appear in its header: the calling
// thread's error buffer and allocations that live as long as the library.

/*
#include <pthread.h>
#include <stdlib.h>

enum { cuvil_err_cap = 4096 };

// cuvil_kept chains the allocations of cuvil_keep_alloc from a static
// head, so that they stay reachable (for leak checkers) and are never
// freed: a pointer the library returned stays readable memory.
struct cuvil_kept { struct cuvil_kept *next; };
static struct cuvil_kept *cuvil_kept_head;
static pthread_mutex_t cuvil_kept_mu = PTHREAD_MUTEX_INITIALIZER;

static char *cuvil_keep_alloc(size_t n) {
	struct cuvil_kept *k = calloc(1, sizeof(struct cuvil_kept) + n);
	if (k == NULL) return NULL;
	pthread_mutex_lock(&cuvil_kept_mu);
	k->next = cuvil_kept_head;
	cuvil_kept_head = k;
	pthread_mutex_unlock(&cuvil_kept_mu);
	return (char *)(k + 1);
}

// The calling thread's error buffer (cuvil_err_cap bytes), made on first
// use and freed when the thread exits.
static pthread_key_t cuvil_err_key;
static pthread_once_t cuvil_err_once = PTHREAD_ONCE_INIT;
static int cuvil_err_ok;

static void cuvil_err_init(void) { cuvil_err_ok = pthread_key_create(&cuvil_err_key, free) == 0; }

static char *cuvil_thread_err(int create) {
	pthread_once(&cuvil_err_once, cuvil_err_init);
	if (!cuvil_err_ok) return NULL;
	char *p = pthread_getspecific(cuvil_err_key);
	if (p == NULL && create) {
		p = calloc(1, cuvil_err_cap);
		if (p != NULL && pthread_setspecific(cuvil_err_key, p) != 0) {
			free(p);
			p = NULL;
		}
	}
	return p;
}
*/
import "C"

import (
	"unicode/utf8"
	"unsafe"
)

// errCap is the size of every error buffer, its NUL included.
const errCap = int(C.cuvil_err_cap)

// keepAlloc returns n zeroed bytes of C memory that are never freed.
func keepAlloc(n int) *C.char {
	p := C.cuvil_keep_alloc(C.size_t(n))
	if p == nil {
		panic("capi: out of C memory")
	}
	return p
}

// keepString is a NUL-terminated C copy of s that is never freed.
func keepString(s string) *C.char {
	p := keepAlloc(len(s) + 1)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(p)), len(s)), s)
	return p
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// writeErr stores s, truncated, into an error buffer of errCap bytes.
// The buffer's last byte is never written, so a reader racing with the
// write (a misuse: calls on one context are meant to be serialised) reads
// a mangled message but never past the end.
func writeErr(buf *C.char, s string) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), errCap)
	s = truncate(s, errCap-1)
	b[0] = 0
	copy(b[1:], s[min(1, len(s)):])
	b[len(s)] = 0
	if len(s) > 0 {
		b[0] = s[0]
	}
}

// setThreadErr records s as the calling thread's last error. Exported
// functions run on the C thread that called them, so this is that
// thread's buffer.
func setThreadErr(s string) {
	if p := C.cuvil_thread_err(1); p != nil {
		writeErr(p, s)
	}
}

// threadErr returns the calling thread's error buffer, or "" when it has none.
func threadErr() *C.char {
	if p := C.cuvil_thread_err(0); p != nil {
		return p
	}
	return emptyString
}

var emptyString = keepString("")
