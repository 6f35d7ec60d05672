/* store.h — the crash store: one crash file per distinct signature in an artifact dir.
 *
 * On open the store loads every crash file already in the dir (an earlier run, or another
 * job fuzzing into the same dir), so a signature is never written twice. A new signature
 * gets crash-<class>-<hash>.bin (never replaced once written; created with link() so two
 * jobs racing on the same signature end up with one file) and its sidecar .json. Repeats
 * only bump a count in memory; af_store_flush adds them to the sidecar's count under a
 * lock on the dir (read, add, atomic rewrite), so jobs sharing a dir sum their counts.
 * Every write of the store takes that lock, a new crash file and its sidecar together; on
 * open, under it, the store removes temp files of its own left by a writer that died before
 * its rename (kill -9) and writes a sidecar missing next to a crash file.
 *
 * The store owns its entries; pointers from af_store_entry_at live until af_store_close. */
#ifndef AF_FUZZ_STORE_H
#define AF_FUZZ_STORE_H

#include <limits.h>
#include <stdint.h>

#include "aotif/crashfile.h"
#include "aotif/error.h"

typedef struct af_store af_store;

typedef struct af_store_entry {
    af_crash crash;      /* as last synced with the dir; crash.count excludes pending */
    char path[PATH_MAX]; /* the crash file */
    int64_t pending;     /* repeats seen here, not yet in the sidecar */
    int64_t seen_here;   /* times this process saw it */
    int loaded;          /* found in the dir at open (or written there by another job) */
    uint64_t hash;       /* af_feat_hash(signature) */
} af_store_entry;

enum { AF_STORE_KNOWN = 0, AF_STORE_NEW = 1 };

/* Create the dir if needed and load its crash files. Unreadable crash files are skipped
 * and counted (af_store_n_skipped, af_store_skipped_msg). NULL on failure. */
af_store *af_store_open(const char *dir, af_error *err);
/* Record one crash. Returns AF_STORE_NEW when a crash file was written for it,
 * AF_STORE_KNOWN when its signature was known (count bumped), -1 on an I/O error. */
int af_store_add(af_store *st, const af_crash *crash, af_error *err);
/* Write pending counts to the sidecars: at most once per interval unless force. */
int af_store_flush(af_store *st, int force, af_error *err);
void af_store_set_flush_interval(af_store *st, double seconds); /* default 1 s */

const af_store_entry *af_store_find(const af_store *st, const char *signature);
int af_store_size(const af_store *st);
const af_store_entry *af_store_entry_at(const af_store *st, int i);
int af_store_n_loaded(const af_store *st);
int af_store_n_skipped(const af_store *st);
int af_store_n_swept(const af_store *st);             /* dead writers' temp files removed at open */
int af_store_n_repaired(const af_store *st);          /* missing sidecars written at open */
const char *af_store_skipped_msg(const af_store *st); /* first skip reason, "" if none */
const char *af_store_dir(const af_store *st);
/* Free (does not flush: call af_store_flush(st, 1, ...) first). NULL is fine. */
void af_store_close(af_store *st);

#endif
