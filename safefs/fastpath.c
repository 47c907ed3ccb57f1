/* The C side of safefs._native: the fast paths of safefs's core.
 *
 * - safefs_openat2, safefs_renameat2: thin shims over the Linux system calls.
 * - safefs_open: one resolution beneath a root fd, by openat2 (Linux) or by the portable walk
 *   (one openat(O_NOFOLLOW) per component, links expanded here with one budget of 40, ".." popped
 *   from the held fds). The walk is a port of safefs/_resolve/walk.py's open(), which stays the
 *   reference: tests/safefs/test_native_walk.py runs both on the same trees.
 * - safefs_read_file: resolve, fstat (regular files only), read, close: a whole read_bytes. With
 *   openat2, a single name is resolved with RESOLVE_NO_SYMLINKS alone first (see there).
 * - safefs_write_named: a whole atomic write of a small file (named temp, write, renameat).
 *
 * The flag policy: this file adds no open flag. Every open here uses flags that Python worked out
 * with safefs._sys.open_flags() (O_CLOEXEC | O_NOCTTY, O_NOFOLLOW unless following) and passed in;
 * policy_ok() refuses flags that lack O_CLOEXEC, or O_NOFOLLOW where nothing may be followed, so a
 * caller that bypassed open_flags() fails loudly instead of leaking an fd or following a link.
 *
 * Every function returns a value >= 0, or -errno, or one of the SAFEFS_E* codes below (all under
 * -4096, so never an errno). cffi releases the GIL around each call. Only POSIX calls are used
 * outside "#ifdef __linux__", so this builds on macOS and the BSDs too.
 *
 * Compiled twice from this one source: as safefs._native (cffi, build_ext.py), and into
 * safefs._native_read (safefs/fastread.c #includes it), which calls safefs_read_file from a plain
 * CPython function with the GIL released.
 */
#ifndef _GNU_SOURCE /* Python.h, included first, may have defined it */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h> /* renameat */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#include <sys/vfs.h>
#endif

#define SAFEFS_EESCAPE (-10001)     /* the path leaves the root */
#define SAFEFS_ENOTREGULAR (-10002) /* read: neither a regular file nor a directory */
#define SAFEFS_EMORE (-10003)       /* read: the content does not fit; out->fd is open, yours */
#define SAFEFS_EPOLICY (-10004)     /* flags that did not come from the flag policy */
#define SAFEFS_ETEMPEXISTS (-10005) /* write: the temp name exists already; try another one */
#define SAFEFS_ELINK (-10006)       /* write: the name is a symlink; the caller resolves it */
#define SAFEFS_KEEP_MODE (-2)       /* write's perm: that of the file replaced (none: `mode`) */

#define SAFEFS_RESOLVE_NO_SYMLINKS 0x04 /* linux/openat2.h, which older headers lack */
#define SAFEFS_MAX_SYMLINKS 40
#define SAFEFS_PATH_MAX 4096
#define SAFEFS_MAX_EAGAIN 128

static long safefs_magic_link(int dirfd, const char *target, size_t len);

#ifndef O_PATH
#define O_PATH 0
#endif

enum { SAFEFS_KIND_OPENAT2 = 0, SAFEFS_KIND_WALK = 1 };
enum { SAFEFS_BENEATH = 0, SAFEFS_NO_SYMLINKS = 1, SAFEFS_IN_ROOT = 2 };

struct safefs_resolver {
    int kind;                 /* SAFEFS_KIND_* */
    int symlinks;             /* SAFEFS_BENEATH, SAFEFS_NO_SYMLINKS, SAFEFS_IN_ROOT */
    uint64_t resolve;         /* openat2: the RESOLVE_* flags */
    uint64_t component_flags; /* walk: how a directory on the way is opened (open_flags()) */
    uint64_t name_resolve;    /* openat2, read_file: RESOLVE_* flags for a single name; must
                               * include RESOLVE_NO_SYMLINKS; 0: not used */
};

struct safefs_read_out {
    int64_t fd;   /* SAFEFS_EMORE: the open fd, now the caller's to close; else -1 */
    int64_t size; /* the size fstat saw */
    int64_t got;  /* SAFEFS_EMORE: bytes already in the buffer (it filled up) */
};

static int policy_ok(uint64_t flags, int may_follow)
{
    if (!(flags & O_CLOEXEC))
        return 0;
    return may_follow || (flags & O_NOFOLLOW);
}

/* ---- the Linux system calls ----------------------------------------------------------------- */

#ifdef __linux__
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

struct safefs_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};

static long safefs_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                           uint64_t resolve)
{
    struct safefs_open_how how = { flags, mode, resolve };
    long r = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    return r < 0 ? -errno : r;
}

static long safefs_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                             unsigned int flags)
{
#ifdef SYS_renameat2
    long r = syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
    return r < 0 ? -errno : r;
#else
    return -ENOSYS;
#endif
}
#else
static long safefs_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                           uint64_t resolve)
{
    (void)dirfd, (void)path, (void)flags, (void)mode, (void)resolve;
    return -ENOSYS;
}

static long safefs_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                             unsigned int flags)
{
    (void)olddirfd, (void)oldpath, (void)newdirfd, (void)newpath, (void)flags;
    return -ENOSYS;
}
#endif

/* ---- the walk ------------------------------------------------------------------------------- */

/* The rest of a path still to walk, components separated by '/'. A link's target is pushed as a
 * segment of its own above the rest, so it is walked first (as walk.py pushes it onto todo). */
struct segment {
    const char *p;
    size_t len;
};

struct walk {
    int root_fd;
    int symlinks;
    uint64_t component_flags;
    int *stack; /* held directory fds, innermost last; the root is below them */
    size_t depth, cap;
    int local[64];
    int links;
    char *targets[SAFEFS_MAX_SYMLINKS + 1]; /* link targets read, freed at the end */
    int ntargets;
    struct segment segs[SAFEFS_MAX_SYMLINKS + 2];
    int nsegs;
};

static void walk_init(struct walk *w, int root_fd, const struct safefs_resolver *r)
{
    w->root_fd = root_fd;
    w->symlinks = r->symlinks;
    w->component_flags = r->component_flags;
    w->stack = w->local;
    w->depth = 0;
    w->cap = sizeof w->local / sizeof w->local[0];
    w->links = 0;
    w->ntargets = 0;
    w->nsegs = 0;
}

static int walk_cur(const struct walk *w)
{
    return w->depth ? w->stack[w->depth - 1] : w->root_fd;
}

static long walk_push(struct walk *w, int fd)
{
    if (w->depth == w->cap) {
        size_t cap = w->cap * 2;
        int *grown = malloc(cap * sizeof *grown);
        if (!grown) {
            close(fd);
            return -ENOMEM;
        }
        memcpy(grown, w->stack, w->depth * sizeof *grown);
        if (w->stack != w->local)
            free(w->stack);
        w->stack = grown;
        w->cap = cap;
    }
    w->stack[w->depth++] = fd;
    return 0;
}

/* Close every held fd, each exactly once. Each run of consecutive numbers on the stack (the
 * kernel hands out the lowest free number, so a walk's fds mostly are one run, or a few where
 * another thread's fd sat between them) is closed with one close_range(2): safe only because
 * every number in a run is one of ours, still open, so no other thread can hold one of them.
 * Where close_range is missing or refused (ENOSYS, a seccomp EPERM) it closed nothing, and the
 * run is closed one fd at a time. */
static void walk_close_all(struct walk *w)
{
    size_t i = 0;
    while (i < w->depth) {
        size_t end = i + 1;
        while (end < w->depth && w->stack[end] == w->stack[end - 1] + 1)
            end++;
#if defined(__linux__) && defined(SYS_close_range)
        if (end - i > 1 && syscall(SYS_close_range, w->stack[i], w->stack[end - 1], 0) == 0) {
            i = end;
            continue;
        }
#endif
        for (; i < end; i++)
            close(w->stack[i]);
    }
    w->depth = 0;
}

static void walk_free(struct walk *w)
{
    int i;
    walk_close_all(w);
    if (w->stack != w->local)
        free(w->stack);
    for (i = 0; i < w->ntargets; i++)
        free(w->targets[i]);
}

/* "..": back to the directory walked before, never a lookup of a name. */
static long walk_up(struct walk *w)
{
    if (w->depth) {
        close(w->stack[--w->depth]);
        return 0;
    }
    return w->symlinks == SAFEFS_IN_ROOT ? 0 : SAFEFS_EESCAPE;
}

/* Follow the symlink `name` of `dirfd`: its target, charged to the budget. `cause` is the error
 * to report if `name` is not (or no longer) a link. An absolute target restarts from the root
 * (in_root) or is an escape. */
static long walk_link(struct walk *w, int dirfd, const char *name, long cause, const char **target,
                      size_t *len)
{
    char *buf;
    ssize_t n;
    long magic;
    if (w->ntargets > SAFEFS_MAX_SYMLINKS)
        return -ELOOP;
    buf = malloc(SAFEFS_PATH_MAX);
    if (!buf)
        return -ENOMEM;
    n = readlinkat(dirfd, name, buf, SAFEFS_PATH_MAX);
    if (n < 0) {
        int err = errno;
        free(buf);
        return (err == EINVAL || err == ENOENT) ? cause : -err;
    }
    if (n == SAFEFS_PATH_MAX) {
        free(buf);
        return -ENAMETOOLONG;
    }
    w->targets[w->ntargets++] = buf;
    w->links++;
    if (w->symlinks == SAFEFS_NO_SYMLINKS || w->links > SAFEFS_MAX_SYMLINKS)
        return -ELOOP;
    magic = safefs_magic_link(dirfd, buf, (size_t)n);
    if (magic)
        return magic < 0 ? magic : -ELOOP;
    if (n > 0 && buf[0] == '/') {
        if (w->symlinks != SAFEFS_IN_ROOT)
            return SAFEFS_EESCAPE;
        walk_close_all(w);
    }
    *target = buf;
    *len = (size_t)n;
    return 0;
}

/* Whether the link `target` (of `len` bytes), read from directory `dirfd`, is a magic link: one on
 * procfs whose text is a path the kernel does not follow (an absolute one: /proc/PID/root, cwd,
 * exe, fd/N; or an anonymous inode's name: "pipe:[N]", "mnt:[N]"). The kernel jumps through
 * those to an inode whatever they say, and openat2's RESOLVE_NO_MAGICLINKS refuses them with
 * ELOOP; the walk refuses them the same way. Procfs's ordinary links ("self" -> "PID",
 * "mounts" -> "self/mounts") are relative. 1, 0, or -errno if fstatfs fails. */
static long safefs_magic_link(int dirfd, const char *target, size_t len)
{
#ifdef __linux__
    struct statfs sfs;
    if (len > 0 && target[0] != '/' && !memchr(target, ':', len))
        return 0;
    if (fstatfs(dirfd, &sfs) != 0)
        return -errno;
    return sfs.f_type == 0x9fa0; /* PROC_SUPER_MAGIC */
#else
    (void)dirfd;
    (void)target;
    (void)len;
    return 0;
#endif
}

/* The next component of the segments still to walk, NUL-terminated into `comp`; 0 at the end. */
static int walk_next(struct walk *w, char *comp)
{
    while (w->nsegs) {
        struct segment *s = &w->segs[w->nsegs - 1];
        const char *slash;
        size_t k;
        if (!s->len) {
            w->nsegs--;
            continue;
        }
        slash = memchr(s->p, '/', s->len);
        k = slash ? (size_t)(slash - s->p) : s->len;
        memcpy(comp, s->p, k);
        comp[k] = '\0';
        s->p += slash ? k + 1 : k;
        s->len -= slash ? k + 1 : k;
        return 1;
    }
    return 0;
}

/* Walk every component but the last of the segments as a directory. */
static long walk_dirs(struct walk *w, char *comp)
{
    while (walk_next(w, comp)) {
        int cur, fd;
        long rc;
        const char *target;
        size_t tlen;
        if (!comp[0] || (comp[0] == '.' && !comp[1]))
            continue;
        if (comp[0] == '.' && comp[1] == '.' && !comp[2]) {
            rc = walk_up(w);
            if (rc)
                return rc;
            continue;
        }
        cur = walk_cur(w);
        fd = openat(cur, comp, (int)w->component_flags);
        if (fd >= 0) {
            rc = walk_push(w, fd);
            if (rc)
                return rc;
            continue;
        }
        if (errno != ELOOP && errno != ENOTDIR)
            return -errno;
        rc = walk_link(w, cur, comp, -errno, &target, &tlen);
        if (rc)
            return rc;
        w->segs[w->nsegs].p = target;
        w->segs[w->nsegs].len = tlen;
        w->nsegs++;
    }
    return 0;
}

/* WalkResolver.open: the walk, then the final name opened with `flags` (following a trailing
 * link within the same budget when `follow`). */
static long walk_open(const struct safefs_resolver *r, int root_fd, const char *path,
                      uint64_t flags, uint64_t mode, int follow)
{
    struct walk w;
    char comp[SAFEFS_PATH_MAX + 1];
    char dot[SAFEFS_PATH_MAX + 3]; /* "name/.": a trailing "name/" is entered, then opened */
    const char *p = path;
    size_t len = strlen(path);
    long result;
    if (len >= SAFEFS_PATH_MAX)
        return -ENAMETOOLONG;
    walk_init(&w, root_fd, r);
    for (;;) {
        size_t end = len, start;
        int trailing = 0, fd;
        const char *target;
        size_t tlen;
        long cause, rc;
        while (end > 0 && p[end - 1] == '/') {
            end--;
            trailing = 1;
        }
        start = end;
        while (start > 0 && p[start - 1] != '/')
            start--;
        w.segs[0].p = p;
        w.segs[0].len = start;
        w.nsegs = 1;
        rc = walk_dirs(&w, comp);
        if (rc) {
            result = rc;
            break;
        }
        if (end == start) { /* only a path of slashes (or nothing) ends here: the directory */
            comp[0] = '.';
            comp[1] = '\0';
        } else {
            memcpy(comp, p + start, end - start);
            comp[end - start] = '\0';
        }
        if (!strcmp(comp, "..")) {
            rc = walk_up(&w);
            if (rc) {
                result = rc;
                break;
            }
            fd = openat(walk_cur(&w), ".", (int)flags, (mode_t)mode);
            result = fd < 0 ? -errno : fd;
            break;
        }
        if (!strcmp(comp, ".")) {
            fd = openat(walk_cur(&w), ".", (int)flags, (mode_t)mode);
            result = fd < 0 ? -errno : fd;
            break;
        }
        if (trailing) {
            /* O_CREAT of "name/" is EISDIR once the parent is resolved, as in the kernel. */
            if (flags & O_CREAT) {
                result = -EISDIR;
                break;
            }
            memmove(dot, comp, end - start);
            memcpy(dot + (end - start), "/.", 3);
            p = dot;
            len = end - start + 2;
            continue;
        }
        fd = openat(walk_cur(&w), comp, (int)flags, (mode_t)mode);
        if (fd >= 0) {
            struct stat st;
            if (!(follow && O_PATH && (flags & O_PATH))) {
                result = fd;
                break;
            }
            /* O_PATH|O_NOFOLLOW opens a symlink itself: see whether we got one. */
            if (fstat(fd, &st) < 0) {
                result = -errno;
                close(fd);
                break;
            }
            if (!S_ISLNK(st.st_mode)) {
                result = fd;
                break;
            }
            close(fd);
            cause = -ELOOP;
        } else {
            if (!follow || (errno != ELOOP && errno != ENOTDIR)) {
                result = -errno;
                break;
            }
            cause = -errno;
        }
        rc = walk_link(&w, walk_cur(&w), comp, cause, &target, &tlen);
        if (rc) {
            result = rc;
            break;
        }
        p = target;
        len = tlen;
    }
    walk_free(&w);
    return result;
}

/* ---- the entry points ----------------------------------------------------------------------- */

/* One resolution of `path` beneath `root_fd`, opened with `flags` (from open_flags()/open_how()).
 * openat2: EAGAIN (a rename raced with a ".." step) is retried; EXDEV is an escape. */
static long safefs_open(const struct safefs_resolver *r, int root_fd, const char *path,
                        uint64_t flags, uint64_t mode, int follow)
{
    if (r->kind == SAFEFS_KIND_OPENAT2) {
        int retries = SAFEFS_MAX_EAGAIN;
        long fd;
        if (!policy_ok(flags, 1))
            return SAFEFS_EPOLICY;
        do
            fd = safefs_openat2(root_fd, path, flags, mode, r->resolve);
        while (fd == -EAGAIN && retries--);
        return fd == -EXDEV ? SAFEFS_EESCAPE : fd;
    }
    if (!policy_ok(flags, 0) || !policy_ok(r->component_flags, 0))
        return SAFEFS_EPOLICY;
    return walk_open(r, root_fd, path, flags, mode, follow);
}

/* Whether `path` is a single name: not empty, no '/', neither "." nor "..". */
static int single_name(const char *path)
{
    return path[0] && !strchr(path, '/') && strcmp(path, ".") && strcmp(path, "..");
}

/* Read until `len` bytes or the end of the file; never closes. */
static long safefs_read_fd(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long)got;
}

/* A whole read_bytes: resolve and open (links followed), fstat (a regular file, or EISDIR /
 * SAFEFS_ENOTREGULAR), read into `buf`, close. Returns the length read. A file that does not fit
 * in `cap` bytes is SAFEFS_EMORE: out->fd is left open for the caller, with out->size and
 * out->got. Every other path closes the fd exactly once, here. */
static long safefs_read_file(const struct safefs_resolver *r, int root_fd, const char *path,
                             uint64_t flags, char *buf, size_t cap, struct safefs_read_out *out)
{
    struct stat st;
    size_t got = 0;
    long fd;
    out->fd = -1;
    out->got = 0;
    if (r->kind == SAFEFS_KIND_OPENAT2 && r->name_resolve && single_name(path)) {
        /* A single name, resolved following no link, is one lookup in the root's own directory:
         * beneath the root by construction, with no directory on the way that could be moved
         * out meanwhile. openat2 with RESOLVE_NO_SYMLINKS alone does what the scoped lookup
         * would, without its cost (the final check that the result is beneath the root, the
         * root's references). A link there is ELOOP: then the scoped openat2 resolves the name,
         * as the symlinks mode says. */
        if (!(r->name_resolve & SAFEFS_RESOLVE_NO_SYMLINKS) || !policy_ok(flags, 1))
            return SAFEFS_EPOLICY;
        fd = safefs_openat2(root_fd, path, flags, 0, r->name_resolve);
        if (fd == -ELOOP)
            fd = safefs_open(r, root_fd, path, flags, 0, 1);
    } else {
        fd = safefs_open(r, root_fd, path, flags, 0, 1);
    }
    if (fd < 0)
        return fd;
    if (fstat((int)fd, &st) < 0) {
        long err = -errno;
        close((int)fd);
        return err;
    }
    out->size = st.st_size;
    if (!S_ISREG(st.st_mode)) {
        close((int)fd);
        return S_ISDIR(st.st_mode) ? -EISDIR : SAFEFS_ENOTREGULAR;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size >= cap) {
        out->fd = fd;
        return SAFEFS_EMORE;
    }
    for (;;) {
        ssize_t n = read((int)fd, buf + got, cap - got);
        if (n < 0) {
            long err;
            if (errno == EINTR)
                continue;
            err = -errno;
            close((int)fd);
            return err;
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (got == (size_t)st.st_size)
            break; /* exactly what fstat saw: the end, as read_bytes has always taken it */
        if (got == cap) {
            out->fd = fd;
            out->got = (int64_t)got;
            return SAFEFS_EMORE;
        }
    }
    close((int)fd);
    return (long)got;
}

/* A whole atomic write of `data` to `name` in `dirfd`: create the temp name (flags from
 * open_flags(O_WRONLY|O_CREAT|O_EXCL); see safefs_write_named), chmod it to `perm` (if >= 0:
 * the umask must not narrow
 * a replaced file's mode), write, fsync if `durable`, close, renameat over `name`, then fsync the
 * directory (opened with `dir_flags`) if `durable`. On any failure the temp name is removed.
 *
 * perm SAFEFS_KEEP_MODE: lstat `name` first (never following it) and keep its mode bits but
 * setuid and setgid; a missing name gets `mode`. A directory is EISDIR, anything else that is
 * not a regular file SAFEFS_ENOTREGULAR, and a symlink SAFEFS_ELINK: nothing is created, and the
 * caller follows the link and comes back with the name it leads to. */
static long write_named_as(int dirfd, const char *name, const char *tmp, const char *data,
                           size_t len, int64_t perm, uint64_t mode, int durable,
                           uint64_t create_flags, uint64_t dir_flags)
{
    size_t done = 0;
    long err = 0;
    int fd;
    fd = openat(dirfd, tmp, (int)create_flags, (mode_t)mode);
    if (fd < 0)
        return errno == EEXIST ? SAFEFS_ETEMPEXISTS : -errno;
    if (perm >= 0 && fchmod(fd, (mode_t)perm) < 0)
        err = -errno;
    while (!err && done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0) {
            if (errno != EINTR)
                err = -errno;
            continue;
        }
        done += (size_t)n;
    }
    if (!err && durable && fsync(fd) < 0)
        err = -errno;
    if (close(fd) < 0 && !err && errno != EINTR)
        err = -errno;
    if (!err && renameat(dirfd, tmp, dirfd, name) < 0)
        err = -errno;
    if (err) {
        unlinkat(dirfd, tmp, 0);
        return err;
    }
    if (durable) {
        int dfd = openat(dirfd, ".", (int)dir_flags);
        if (dfd < 0)
            return -errno;
        if (fsync(dfd) < 0)
            err = -errno;
        close(dfd);
    }
    return err;
}

/* The temp names: ".NAME.TOKENn.SUFFIX" (NAME cut to 120 bytes, so NAME_MAX holds whatever the
 * target's length), n from a process-wide counter. A name that exists already (planted, or a
 * leftover) is never reused and never followed: the next number is tried, up to 100 times. */
static unsigned long safefs_temp_counter;

static long safefs_write_named(int dirfd, const char *name, const char *token, const char *suffix,
                               const char *data, size_t len, int64_t perm, uint64_t mode,
                               int durable, uint64_t create_flags, uint64_t dir_flags)
{
    char tmp[256];
    int attempt;
    if (!policy_ok(create_flags, 0) || !(create_flags & O_EXCL) || !policy_ok(dir_flags, 0))
        return SAFEFS_EPOLICY;
    if (strlen(token) + strlen(suffix) > 80)
        return -EINVAL;
    if (perm == SAFEFS_KEEP_MODE) {
        struct stat st;
        perm = -1;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (S_ISLNK(st.st_mode))
                return SAFEFS_ELINK;
            if (S_ISDIR(st.st_mode))
                return -EISDIR;
            if (!S_ISREG(st.st_mode))
                return SAFEFS_ENOTREGULAR;
            perm = st.st_mode & 07777 & ~(S_ISUID | S_ISGID);
            mode = (uint64_t)perm;
        } else if (errno != ENOENT) {
            return -errno;
        }
    }
    for (attempt = 0; attempt < 100; attempt++) {
        unsigned long n = __atomic_fetch_add(&safefs_temp_counter, 1, __ATOMIC_RELAXED);
        long r;
        snprintf(tmp, sizeof tmp, ".%.120s.%sn%lu%s", name, token, n, suffix);
        r = write_named_as(dirfd, name, tmp, data, len, perm, mode, durable, create_flags,
                           dir_flags);
        if (r != SAFEFS_ETEMPEXISTS)
            return r;
    }
    return SAFEFS_ETEMPEXISTS;
}

/* Many read_heads in one call (Root.read_heads): for each of the `n` paths in turn, what
 * safefs_read_file does (the same resolution, fstat, regular-file check), then at most `size`
 * bytes read and the fd closed, here, exactly once. The contents are packed one after another
 * into `buf` (`buflen` bytes); a file is started only while at least `size` bytes are left, so
 * memory is bounded by `buflen` whatever the files hold. For file i, lens[i] is the number of
 * bytes read (at offs[i] in `buf`) or a negative code as safefs_read_file returns it (never
 * SAFEFS_EMORE: a file longer than `size` gives its first `size` bytes). Returns how many paths
 * were done (the first ones; the caller asks again for the rest), at least one when
 * buflen >= size, or SAFEFS_EPOLICY. The GIL is released for the whole batch. */
static long safefs_read_heads(const struct safefs_resolver *r, int root_fd,
                              const char *const *paths, size_t n, uint64_t flags, size_t size,
                              char *buf, size_t buflen, int64_t *lens, int64_t *offs)
{
    size_t i, used = 0;
    if (!policy_ok(flags, 1))
        return SAFEFS_EPOLICY;
    for (i = 0; i < n && buflen - used >= size; i++) {
        struct safefs_read_out out;
        /* cap size + 1: a file of exactly `size` bytes is read whole by read_file; a longer one
         * comes back open (SAFEFS_EMORE), and its head is read below. */
        long got = safefs_read_file(r, root_fd, paths[i], flags, buf + used,
                                    size < buflen - used ? size + 1 : size, &out);
        offs[i] = (int64_t)used;
        if (got == SAFEFS_EMORE) {
            /* Larger than `size` when fstat looked (nothing read yet), or it grew while read
             * (the buffer filled): the rest of the head, up to `size` bytes in all. */
            size_t have = out.got > (int64_t)size ? size : (size_t)out.got;
            got = safefs_read_fd((int)out.fd, buf + used + have, size - have);
            if (got >= 0)
                got += (long)have;
            close((int)out.fd);
        }
        lens[i] = got;
        if (got > 0)
            used += (size_t)got;
    }
    return (long)i;
}
