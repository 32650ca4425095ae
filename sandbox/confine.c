/*
 * pairbench_async._confine -- the native half of the sandbox.
 *
 *** Theory of operation ***
 *
 * Untrusted programs (candidate repairs, and references too) run in a tree of
 * three kinds of processes, all started from one small Python file
 * (pairbench_async/_worker.py) that imports this module:
 *
 *   pool (asyncio, the evaluator)
 *     └─ W  worker: `python -S -I _worker.py`, long-lived, one per core.
 *            At start it calls enter_namespaces() (a fresh network namespace,
 *            a private mount namespace with a small tmpfs as its scratch
 *            directory; a user namespace only when not root), builds the
 *            Landlock ruleset once (landlock_ruleset()) and attaches the
 *            worker seccomp filter (worker_filter()): no ptrace, mounts,
 *            namespaces, kexec, modules, bpf, keyrings, perf, io_uring, no
 *            sockets but AF_UNIX, no chmod/chown, x32 and foreign ABIs denied.
 *        └─ Z  program zygote, forked from W for each program: compiles the
 *               program once and forks one child per test.
 *             └─ C  test child: calls confine() and then runs the program.
 *
 * confine() applies, in one C call (one call is ~40 us cheaper than separate
 * Python calls, and it leaves no window where half the layers are on):
 *   stdio redirection, chdir to the scratch directory, rlimits (CPU, address
 *   space = worker size + budget, file size = output cap, open files,
 *   processes, stack, no core), PDEATHSIG, the unprivileged uid/gid (when
 *   root), an empty capability set, no_new_privs, the Landlock domain, a
 *   non-dumpable flag, and a second, small seccomp filter that forbids
 *   creating processes (fork, vfork, clone without CLONE_THREAD, execve) and
 *   signalling anything but itself. With no process creation there is
 *   nothing that could outlive the test: no daemon, no zombie, no fork bomb,
 *   so no PID namespace or cgroup is needed (a PID namespace would also make
 *   the child PID 1, which ignores SIGXCPU). Threads still work.
 *
 * Why an extension module and not an exec'ed helper binary: the expensive
 * part of a test run is starting an interpreter (~45 ms here); forking a
 * warm zygote costs ~1 ms. An exec'ed helper would force an interpreter
 * start per test, so the confinement is a library the forked child calls.
 *
 * Errors: every function raises OSError with the failing step named. A
 * failure inside confine() means the child must not run the program: the
 * caller turns it into a sandbox-fault verdict, never a program verdict.
 * The "confined" handshake byte is written only after every layer is on,
 * and its descriptor is closed before the program runs, so the program
 * cannot forge it.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*** Architecture ***/

#if defined(__x86_64__)
#define PB_AUDIT_ARCH AUDIT_ARCH_X86_64
#define PB_X32_BIT 0x40000000U
#elif defined(__aarch64__)
#define PB_AUDIT_ARCH AUDIT_ARCH_AARCH64
#define PB_X32_BIT 0U
#else
#error "pairbench_async's sandbox supports x86_64 and aarch64"
#endif

/*** Landlock (the system headers here predate ABI 4-7: define what we use) ***/

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)     /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)  /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */

struct pb_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct pb_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_READ_RIGHTS (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)

static int landlock_abi(void)
{
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

static uint64_t landlock_fs_rights(int abi)
{
    uint64_t r = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
    if (abi >= 2)
        r |= LL_FS_REFER;
    if (abi >= 3)
        r |= LL_FS_TRUNCATE;
    if (abi >= 5)
        r |= LL_FS_IOCTL_DEV;
    return r;
}

/*** Seccomp ***/

#define ARCH_NR (offsetof(struct seccomp_data, arch))
#define SYSCALL_NR (offsetof(struct seccomp_data, nr))
#define ARG_LO(n) (offsetof(struct seccomp_data, args[n]))
#define ARG_HI(n) (offsetof(struct seccomp_data, args[n]) + 4)

#define STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)))
#define RET_ALLOW STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define RET_ERRNO(e) STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define RET_KILL STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define LOAD(off) STMT(BPF_LD | BPF_W | BPF_ABS, (off))

#define CLONE_NS_FLAGS                                                                              \
    (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |  \
     CLONE_NEWNET | 0x00000080 /* CLONE_NEWTIME */)

/* Syscalls no evaluated program (and no worker after its set-up) needs.
 * Missing numbers on an architecture are skipped at build time. */
static const int worker_denied[] = {
    __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_mount, __NR_umount2,
    __NR_pivot_root, __NR_chroot, __NR_unshare, __NR_setns, __NR_kexec_load,
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
    __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_bpf, __NR_keyctl, __NR_add_key,
    __NR_request_key, __NR_perf_event_open, __NR_personality, __NR_reboot, __NR_swapon,
    __NR_swapoff, __NR_acct, __NR_syslog, __NR_settimeofday, __NR_clock_settime,
    __NR_clock_adjtime, __NR_adjtimex, __NR_quotactl, __NR_open_by_handle_at,
    __NR_name_to_handle_at, __NR_userfaultfd, __NR_fanotify_init, __NR_sethostname,
    __NR_setdomainname, __NR_vhangup, __NR_kcmp, __NR_io_uring_setup, __NR_io_uring_enter,
    __NR_io_uring_register, __NR_move_mount, __NR_open_tree, __NR_fsopen, __NR_fsconfig,
    __NR_fsmount, __NR_fspick, __NR_mount_setattr, __NR_pidfd_getfd, __NR_chmod, __NR_fchmod,
    __NR_fchmodat, __NR_chown, __NR_fchown, __NR_lchown, __NR_fchownat, __NR_setxattr,
    __NR_lsetxattr, __NR_fsetxattr, __NR_removexattr, __NR_lremovexattr, __NR_fremovexattr,
    __NR_mknod, __NR_mknodat,
#ifdef __NR_iopl
    __NR_iopl, __NR_ioperm,
#endif
#ifdef __NR_modify_ldt
    __NR_modify_ldt,
#endif
#ifdef __NR_uselib
    __NR_uselib,
#endif
#ifdef __NR_lookup_dcookie
    __NR_lookup_dcookie,
#endif
#ifdef __NR_quotactl_fd
    __NR_quotactl_fd,
#endif
    452 /* fchmodat2 */,
};

#define MAX_FILTER 192

struct filter {
    struct sock_filter ins[MAX_FILTER];
    unsigned short len;
};

static void emit(struct filter *f, struct sock_filter ins)
{
    if (f->len < MAX_FILTER)
        f->ins[f->len] = ins;
    f->len++;
}

static void emit_arch_check(struct filter *f)
{
    emit(f, LOAD(ARCH_NR));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, PB_AUDIT_ARCH, 1, 0));
    emit(f, RET_KILL);
    emit(f, LOAD(SYSCALL_NR));
#if PB_X32_BIT
    /* x32 syscalls share the x86_64 arch value; their numbers carry bit 30. */
    emit(f, JUMP(BPF_JMP | BPF_JGE | BPF_K, PB_X32_BIT, 0, 1));
    emit(f, RET_ERRNO(EPERM));
#endif
}

/* if nr == N: if (arg0 low != value) errno, reloading nr afterwards. */
static void emit_socket_family(struct filter *f, int nr)
{
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 4));
    emit(f, LOAD(ARG_LO(0)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0));
    emit(f, RET_ERRNO(EAFNOSUPPORT));
    emit(f, RET_ALLOW);
}

/* The worker's filter: everything the set-up needed is done by now. */
static int build_worker_filter(struct filter *f)
{
    size_t i;
    f->len = 0;
    emit_arch_check(f);
    /* clone3 passes its flags in memory, which BPF cannot read: say ENOSYS so
     * libc falls back to clone, whose flags we can check. */
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1));
    emit(f, RET_ERRNO(ENOSYS));
    /* clone with any namespace flag would get around the unshare ban. */
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4));
    emit(f, LOAD(ARG_LO(0)));
    emit(f, JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NS_FLAGS, 0, 1));
    emit(f, RET_ERRNO(EPERM));
    emit(f, RET_ALLOW);
    emit_socket_family(f, __NR_socket);
    emit_socket_family(f, __NR_socketpair);
    for (i = 0; i < sizeof(worker_denied) / sizeof(worker_denied[0]); i++) {
        emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)worker_denied[i], 0, 1));
        emit(f, RET_ERRNO(EPERM));
    }
    emit(f, RET_ALLOW);
    return f->len <= MAX_FILTER ? 0 : -1;
}

/* if nr == N: allow only when arg `argn` is this process's own pid. */
static void emit_self_only(struct filter *f, int nr, int argn, uint32_t pid)
{
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 6));
    emit(f, LOAD(ARG_HI(argn)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2));
    emit(f, LOAD(ARG_LO(argn)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, pid, 1, 0));
    emit(f, RET_ERRNO(EPERM));
    emit(f, RET_ALLOW);
}

/* The test child's filter: no new processes, no signals to anyone else. */
static int build_child_filter(struct filter *f, uint32_t pid)
{
    f->len = 0;
    emit_arch_check(f);
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4));
    emit(f, LOAD(ARG_LO(0)));
    emit(f, JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0));
    emit(f, RET_ERRNO(EPERM));
    emit(f, RET_ALLOW);
#ifdef __NR_fork
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fork, 0, 1));
    emit(f, RET_ERRNO(EPERM));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_vfork, 0, 1));
    emit(f, RET_ERRNO(EPERM));
#endif
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 0, 1));
    emit(f, RET_ERRNO(EPERM));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 0, 1));
    emit(f, RET_ERRNO(EPERM));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tkill, 0, 1));
    emit(f, RET_ERRNO(EPERM));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_open, 0, 1));
    emit(f, RET_ERRNO(EPERM));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_send_signal, 0, 1));
    emit(f, RET_ERRNO(EPERM));
    emit_self_only(f, __NR_kill, 0, pid);
    emit_self_only(f, __NR_tgkill, 0, pid);
    emit_self_only(f, __NR_rt_sigqueueinfo, 0, pid);
    emit_self_only(f, __NR_rt_tgsigqueueinfo, 0, pid);
    /* prlimit64(0, ...) is the process itself; anything else is someone else. */
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prlimit64, 0, 8));
    emit(f, LOAD(ARG_HI(0)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4));
    emit(f, LOAD(ARG_LO(0)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, pid, 2, 0));
    emit(f, RET_ERRNO(EPERM));
    emit(f, RET_ERRNO(EPERM));
    emit(f, RET_ALLOW);
    emit(f, RET_ALLOW);
    return f->len <= MAX_FILTER ? 0 : -1;
}

static int attach_filter(struct filter *f)
{
    struct sock_fprog prog = {.len = f->len, .filter = f->ins};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/*** Python-facing functions ***/

static PyObject *raise_step(const char *step)
{
    int saved = errno;
    PyObject *msg = PyUnicode_FromFormat("%s: %s", step, strerror(saved));
    if (msg != NULL) {
        PyObject *exc = PyObject_CallFunction(PyExc_OSError, "iO", saved, msg);
        if (exc != NULL) {
            PyErr_SetObject(PyExc_OSError, exc);
            Py_DECREF(exc);
        }
        Py_DECREF(msg);
    }
    return NULL;
}

PyDoc_STRVAR(probe_doc, "probe() -> dict\n\nWhich confinement mechanisms this kernel offers.");

static PyObject *pb_probe(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    int seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
    return Py_BuildValue("{s:i,s:O,s:s}", "landlock_abi", landlock_abi(), "seccomp",
                         seccomp ? Py_True : Py_False, "arch",
#if defined(__x86_64__)
                         "x86_64"
#else
                         "aarch64"
#endif
    );
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

PyDoc_STRVAR(enter_namespaces_doc,
             "enter_namespaces(user: bool) -> None\n\n"
             "Move the calling (single-threaded) worker into a fresh network namespace\n"
             "and a private mount namespace. With user=True (not root) a user namespace\n"
             "is created first, mapping only the caller's own uid and gid: namespace\n"
             "root is never mapped to host root.");

static PyObject *pb_enter_namespaces(PyObject *self, PyObject *args)
{
    (void)self;
    int user;
    if (!PyArg_ParseTuple(args, "p", &user))
        return NULL;
    uid_t uid = getuid();
    gid_t gid = getgid();
    int flags = CLONE_NEWNET | CLONE_NEWNS | (user ? CLONE_NEWUSER : 0);
    if (unshare(flags) != 0)
        return raise_step("unshare");
    if (user) {
        char map[64];
        if (write_file("/proc/self/setgroups", "deny") != 0)
            return raise_step("setgroups deny");
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        if (write_file("/proc/self/uid_map", map) != 0)
            return raise_step("uid_map");
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        if (write_file("/proc/self/gid_map", map) != 0)
            return raise_step("gid_map");
    }
    /* Our mounts must not propagate back to the host. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return raise_step("make mounts private");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(mount_tmpfs_doc,
             "mount_tmpfs(path, size_mb, uid, gid, mode) -> None\n\n"
             "Mount a size-capped tmpfs (nosuid, nodev, noexec) owned by uid:gid (or the\n"
             "caller when uid < 0) with the given mode at path, inside the worker's\n"
             "private mount namespace. The scratch directory is one: a disk fill ends at\n"
             "its size, and it vanishes with the worker.");

static PyObject *pb_mount_tmpfs(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    unsigned long size_mb;
    long uid, gid;
    unsigned int mode;
    char opts[160];
    if (!PyArg_ParseTuple(args, "skllI", &path, &size_mb, &uid, &gid, &mode))
        return NULL;
    if (uid >= 0)
        snprintf(opts, sizeof opts, "size=%lum,mode=%04o,uid=%ld,gid=%ld,nr_inodes=4096", size_mb,
                 mode, uid, gid);
    else
        snprintf(opts, sizeof opts, "size=%lum,mode=%04o,nr_inodes=4096", size_mb, mode);
    if (mount("pb-tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) != 0)
        return raise_step("mount tmpfs");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(bind_mount_doc,
             "bind_mount(source, target) -> None\n\n"
             "Recursively bind source onto target, read-only, in the worker's mount\n"
             "namespace. Used to make an interpreter that lives under a 0700 home (root's,\n"
             "on CI) reachable by the unprivileged child: the home is covered by an\n"
             "empty tmpfs and only the interpreter's prefix is bound back.");

static PyObject *pb_bind_mount(PyObject *self, PyObject *args)
{
    (void)self;
    const char *source, *target;
    if (!PyArg_ParseTuple(args, "ss", &source, &target))
        return NULL;
    if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0)
        return raise_step("bind mount");
    if (mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
        return raise_step("read-only remount");
    Py_RETURN_NONE;
}

static int add_path_rule(int ruleset, const char *path, uint64_t rights, uint64_t handled)
{
    struct stat st;
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == EACCES ? 0 : -1; /* absent paths are fine */
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        rights &= LL_FILE_RIGHTS;
    struct pb_path_beneath_attr attr = {.allowed_access = rights & handled, .parent_fd = fd};
    long rc = syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &attr, 0);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc == 0 ? 0 : -1;
}

static int add_rules(int ruleset, PyObject *paths, uint64_t rights, uint64_t handled)
{
    Py_ssize_t i, n = PySequence_Size(paths);
    if (n < 0)
        return -2;
    for (i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(paths, i);
        if (item == NULL)
            return -2;
        PyObject *bytes = PyUnicode_EncodeFSDefault(item);
        Py_DECREF(item);
        if (bytes == NULL)
            return -2;
        int rc = add_path_rule(ruleset, PyBytes_AS_STRING(bytes), rights, handled);
        Py_DECREF(bytes);
        if (rc != 0)
            return -1;
    }
    return 0;
}

PyDoc_STRVAR(landlock_ruleset_doc,
             "landlock_ruleset(read_paths, write_paths, device_paths) -> (fd, abi)\n\n"
             "Build, once per worker, a Landlock ruleset handling every access right\n"
             "of this kernel's ABI: read and execute beneath read_paths, everything\n"
             "beneath write_paths (the scratch directory), read and write of the\n"
             "device files in device_paths; TCP bind/connect denied (ABI 4) and\n"
             "signals and abstract sockets scoped to the domain (ABI 6). Returns\n"
             "(-1, 0) when the kernel has no Landlock.");

static PyObject *pb_landlock_ruleset(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *reads, *writes, *devices;
    if (!PyArg_ParseTuple(args, "OOO", &reads, &writes, &devices))
        return NULL;
    int abi = landlock_abi();
    if (abi <= 0)
        return Py_BuildValue("(ii)", -1, 0);
    struct pb_ruleset_attr attr = {0};
    size_t attr_size = sizeof attr;
    attr.handled_access_fs = landlock_fs_rights(abi);
    if (abi >= 4)
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    else
        attr_size = offsetof(struct pb_ruleset_attr, handled_access_net);
    if (abi >= 6)
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
    else if (abi >= 4)
        attr_size = offsetof(struct pb_ruleset_attr, scoped);
    int fd = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
    if (fd < 0)
        return raise_step("landlock_create_ruleset");
    uint64_t all = attr.handled_access_fs;
    int rc = add_rules(fd, reads, LL_READ_RIGHTS, all);
    if (rc == 0)
        rc = add_rules(fd, writes, all, all);
    if (rc == 0)
        rc = add_rules(fd, devices, LL_FS_READ_FILE | LL_FS_WRITE_FILE, all);
    if (rc != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return rc == -2 ? NULL : raise_step("landlock_add_rule");
    }
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        close(fd);
        return raise_step("fcntl ruleset");
    }
    return Py_BuildValue("(ii)", fd, abi);
}

PyDoc_STRVAR(worker_filter_doc,
             "worker_filter() -> int\n\nSet no_new_privs and attach the worker's seccomp filter;\n"
             "returns its length in BPF instructions.");

static PyObject *pb_worker_filter(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    struct filter f;
    if (build_worker_filter(&f) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "worker seccomp filter too long");
        return NULL;
    }
    if (attach_filter(&f) != 0)
        return raise_step("seccomp worker filter");
    return PyLong_FromLong(f.len);
}

PyDoc_STRVAR(set_pdeathsig_doc, "set_pdeathsig(sig) -> None\n\nDie with `sig` when the parent dies.");

static PyObject *pb_set_pdeathsig(PyObject *self, PyObject *args)
{
    (void)self;
    int sig;
    if (!PyArg_ParseTuple(args, "i", &sig))
        return NULL;
    if (prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0)
        return raise_step("PR_SET_PDEATHSIG");
    Py_RETURN_NONE;
}

static int set_limit(int resource, unsigned long long soft, unsigned long long hard)
{
    struct rlimit rl = {.rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard};
    return setrlimit(resource, &rl);
}

static int drop_capabilities(void)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    return (int)syscall(__NR_capset, &hdr, data);
}

/* Everything the test child does before running the program; returns the
 * failing step's name, or NULL when every layer is on. errno is kept. */
struct child_spec {
    int fds[4];
    const char *cwd;
    unsigned long long lim[7]; /* cpu soft, cpu hard, as, fsize, nofile, nproc, stack */
    long uid, gid;
    int ruleset, handshake, full;
    pid_t parent;
};

static const char *do_confine(const struct child_spec *c)
{
    static const int resources[7] = {RLIMIT_CPU, -1, RLIMIT_AS, RLIMIT_FSIZE,
                                      RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_STACK};
    static const char *names[7] = {"RLIMIT_CPU", "", "RLIMIT_AS", "RLIMIT_FSIZE",
                                   "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_STACK"};
    int i;
    if (dup2(c->fds[0], 0) < 0 || dup2(c->fds[1], 1) < 0 || dup2(c->fds[2], 2) < 0 ||
        (c->fds[3] != 3 && dup2(c->fds[3], 3) < 0))
        return "dup2";
    if (chdir(c->cwd) != 0)
        return "chdir scratch";
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        return "PR_SET_PDEATHSIG";
    if (getppid() != c->parent) { /* the zygote died before we could notice */
        errno = ESRCH;
        return "parent gone";
    }
    if (c->full) {
        if (set_limit(RLIMIT_CORE, 0, 0) != 0)
            return "RLIMIT_CORE";
        for (i = 0; i < 7; i++) {
            if (i == 1 || c->lim[i] == 0)
                continue;
            unsigned long long hard = i == 0 ? c->lim[1] : c->lim[i];
            if (set_limit(resources[i], c->lim[i], hard) != 0)
                return names[i];
        }
        if (c->uid >= 0) {
            if (setgroups(0, NULL) != 0)
                return "setgroups";
            if (setresgid((gid_t)c->gid, (gid_t)c->gid, (gid_t)c->gid) != 0)
                return "setresgid";
            if (setresuid((uid_t)c->uid, (uid_t)c->uid, (uid_t)c->uid) != 0)
                return "setresuid";
        }
        if (drop_capabilities() != 0)
            return "capset";
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            return "no_new_privs";
        if (c->ruleset >= 0 && syscall(__NR_landlock_restrict_self, c->ruleset, 0) != 0)
            return "landlock_restrict_self";
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
            return "PR_SET_DUMPABLE";
        struct filter f;
        if (build_child_filter(&f, (uint32_t)getpid()) != 0) {
            errno = E2BIG;
            return "child seccomp filter too long";
        }
        if (attach_filter(&f) != 0)
            return "seccomp child filter";
    }
    if (write(c->handshake, "K", 1) != 1)
        return "handshake";
    /* Nothing above stdio and the result channel survives: not the worker's
     * control pipes, not the ruleset, not the handshake. */
    if (syscall(__NR_close_range, 4U, ~0U, 0) != 0) {
        long fd, max = sysconf(_SC_OPEN_MAX);
        for (fd = 4; fd < max; fd++)
            close((int)fd);
    }
    return NULL;
}

PyDoc_STRVAR(
    confine_doc,
    "confine(fds, cwd, limits, uid, gid, ruleset_fd, handshake_fd, parent_pid, full) -> None\n\n"
    "Confine the calling process, all in one call; see the theory of operation.\n"
    "fds = (stdin, stdout, stderr, result) become 0, 1, 2 and 3; every other\n"
    "descriptor is closed. limits = (cpu_soft_s, cpu_hard_s, address_space,\n"
    "file_size, open_files, processes, stack); 0 leaves a limit alone. uid < 0\n"
    "keeps the identity. full = False skips every layer except the redirection\n"
    "(the unconfined benchmark mode). On success one byte 'K' is written to\n"
    "handshake_fd, which is then closed. serve() uses the same code.");

static PyObject *pb_confine(PyObject *self, PyObject *args)
{
    (void)self;
    struct child_spec c;
    long parent;
    if (!PyArg_ParseTuple(args, "(iiii)s(KKKKKKK)lliilp", &c.fds[0], &c.fds[1], &c.fds[2],
                          &c.fds[3], &c.cwd, &c.lim[0], &c.lim[1], &c.lim[2], &c.lim[3], &c.lim[4],
                          &c.lim[5], &c.lim[6], &c.uid, &c.gid, &c.ruleset, &c.handshake, &parent,
                          &c.full))
        return NULL;
    c.parent = (pid_t)parent;
    const char *step = do_confine(&c);
    if (step != NULL)
        return raise_step(step);
    Py_RETURN_NONE;
}

/*** The zygote's test loop ***/

/* Frames: "<BI" header, then for RESULT the "<iIqqqqIIII" block below. */
#define OP_TEST 2
#define OP_END 3
#define OP_RESULT 12
#define FLAG_WALL_TIMEOUT 1
#define FLAG_CONFINED 2
#define EXIT_FAULT 121

#pragma pack(push, 1)
struct frame_header {
    uint8_t op;
    uint32_t len;
};
struct result_block {
    int32_t status;
    uint32_t flags;
    int64_t cpu_us, wall_us, maxrss_kb, base_kb;
    uint32_t out_len, err_len, chan_len, fault_len;
};
#pragma pack(pop)

struct buffer {
    char *data;
    size_t cap;
};

static int reserve(struct buffer *b, size_t n)
{
    if (b->cap >= n)
        return 0;
    char *p = malloc(n);
    if (p == NULL)
        return -1;
    if (b->data) {
        memset(b->data, 0, b->cap); /* never leave an old input behind */
        free(b->data);
    }
    b->data = p;
    b->cap = n;
    return 0;
}

static int read_full(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k == 0 ? 1 : -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int write_full(int fd, struct iovec *iov, int cnt)
{
    while (cnt > 0) {
        ssize_t k = writev(fd, iov, cnt);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        while (cnt > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            cnt--;
        }
        if (cnt > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

/* Read [start, start+n) of an fd into b; returns bytes read or -1. */
static ssize_t slurp(int fd, struct buffer *b, off_t start, size_t n)
{
    if (reserve(b, n + 1) != 0)
        return -1;
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, b->data + got, n - got, start + (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

PyDoc_STRVAR(
    serve_doc,
    "serve(fin, fout, fds, cwd, limits, uid, gid, ruleset, handshake_w, handshake_r, full,\n"
    "      wall_ms, output_cap, stderr_tail, channel_cap, base_kb, scratch) -> int\n\n"
    "The zygote's loop, in C so that the zygote touches (and so copies) almost no\n"
    "Python memory between forks. For each TEST frame read from fin: put its\n"
    "payload in the stdin memfd (and wipe the buffer), fork, confine the child,\n"
    "wait on a pidfd up to wall_ms (SIGKILL after), wait4 for the rusage, and\n"
    "write one RESULT frame (status, flags, cpu, wall, maxrss, stdout, stderr\n"
    "tail, channel, fault) to fout. Returns 1 in the confined child (which must\n"
    "run the program and _exit), 0 on END or end of input, 2 when the scratch\n"
    "directory changed and must be emptied before calling again.");

static PyObject *pb_serve(PyObject *self, PyObject *args)
{
    (void)self;
    int fin, fout, hs_r, wall_ms;
    unsigned long long out_cap, err_tail, chan_cap;
    long long base_kb;
    const char *scratch;
    struct child_spec c;
    if (!PyArg_ParseTuple(args, "ii(iiii)s(KKKKKKK)lliiipiKKKLs", &fin, &fout, &c.fds[0],
                          &c.fds[1], &c.fds[2], &c.fds[3], &c.cwd, &c.lim[0], &c.lim[1],
                          &c.lim[2], &c.lim[3], &c.lim[4], &c.lim[5], &c.lim[6], &c.uid, &c.gid,
                          &c.ruleset, &c.handshake, &hs_r, &c.full, &wall_ms, &out_cap, &err_tail,
                          &chan_cap, &base_kb, &scratch))
        return NULL;
    c.parent = getpid();

    struct stat st;
    if (stat(scratch, &st) != 0)
        return raise_step("stat scratch");
    struct timespec scratch_mtime = st.st_mtim;
    struct buffer in = {0}, out = {0}, err = {0}, chan = {0};
    char fault[512];
    PyObject *ret = NULL;

    for (;;) {
        struct frame_header h;
        int rc = read_full(fin, (char *)&h, sizeof h);
        if (rc == 1 || (rc == 0 && h.op == OP_END)) {
            ret = PyLong_FromLong(0);
            break;
        }
        if (rc != 0) {
            raise_step("read frame");
            break;
        }
        if (h.op != OP_TEST) {
            PyErr_Format(PyExc_ValueError, "zygote: unexpected frame op %d", (int)h.op);
            break;
        }
        if (reserve(&in, h.len + 1) != 0) {
            PyErr_NoMemory();
            break;
        }
        rc = read_full(fin, in.data, h.len);
        if (rc != 0) {
            if (rc == 1)
                ret = PyLong_FromLong(0);
            else
                raise_step("read payload");
            break;
        }
        int i, failed = 0;
        if (ftruncate(c.fds[0], 0) != 0 || pwrite(c.fds[0], in.data, h.len, 0) != (ssize_t)h.len ||
            lseek(c.fds[0], 0, SEEK_SET) != 0)
            failed = 1;
        memset(in.data, 0, h.len); /* the next child must not find this input */
        for (i = 1; i < 4 && !failed; i++)
            if (ftruncate(c.fds[i], 0) != 0 || lseek(c.fds[i], 0, SEEK_SET) != 0)
                failed = 1;
        if (failed) {
            raise_step("reset memfds");
            break;
        }

        int64_t t0 = now_us();
        PyOS_BeforeFork();
        pid_t pid = fork();
        if (pid == 0) {
            PyOS_AfterFork_Child();
            const char *step = do_confine(&c);
            if (step != NULL) {
                int n = snprintf(fault, sizeof fault, "E%s: %s", step, strerror(errno));
                if (n > 0 && write(c.handshake, fault, (size_t)n) < 0)
                    _exit(EXIT_FAULT);
                _exit(EXIT_FAULT);
            }
            ret = PyLong_FromLong(1);
            break;
        }
        PyOS_AfterFork_Parent();
        if (pid < 0) {
            raise_step("fork");
            break;
        }
        struct result_block r = {0};
        int pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
        if (pidfd >= 0) {
            struct pollfd p = {.fd = pidfd, .events = POLLIN};
            int n;
            do
                n = poll(&p, 1, wall_ms);
            while (n < 0 && errno == EINTR);
            if (n == 0) {
                kill(pid, SIGKILL);
                r.flags |= FLAG_WALL_TIMEOUT;
            }
            close(pidfd);
        }
        int status = 0;
        struct rusage ru;
        while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
            ;
        r.wall_us = now_us() - t0;
        r.status = status;
        r.cpu_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
                   (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
        r.maxrss_kb = ru.ru_maxrss;
        r.base_kb = base_kb;

        ssize_t hn = read(hs_r, fault, sizeof fault);
        const char *fault_text = "";
        size_t fault_len = 0;
        if (hn > 0 && fault[0] == 'K') {
            r.flags |= FLAG_CONFINED;
        } else if (hn > 0 && fault[0] == 'E') {
            fault_text = fault + 1;
            fault_len = (size_t)hn - 1;
        } else {
            fault_text = "child died before confinement";
            fault_len = strlen(fault_text);
        }

        struct stat fs;
        ssize_t n_out = 0, n_err = 0, n_chan = 0;
        if (fstat(c.fds[1], &fs) == 0)
            n_out = slurp(c.fds[1], &out, 0, (size_t)fs.st_size < out_cap ? (size_t)fs.st_size : out_cap);
        if (fstat(c.fds[2], &fs) == 0) {
            off_t start = fs.st_size > (off_t)err_tail ? fs.st_size - (off_t)err_tail : 0;
            n_err = slurp(c.fds[2], &err, start, (size_t)(fs.st_size - start));
        }
        if (fstat(c.fds[3], &fs) == 0)
            n_chan = slurp(c.fds[3], &chan, 0, (size_t)fs.st_size < chan_cap ? (size_t)fs.st_size : chan_cap);
        if (n_out < 0 || n_err < 0 || n_chan < 0) {
            PyErr_NoMemory();
            break;
        }
        r.out_len = (uint32_t)n_out;
        r.err_len = (uint32_t)n_err;
        r.chan_len = (uint32_t)n_chan;
        r.fault_len = (uint32_t)fault_len;
        struct frame_header oh = {.op = OP_RESULT,
                                  .len = (uint32_t)(sizeof r + (size_t)n_out + (size_t)n_err +
                                                    (size_t)n_chan + fault_len)};
        struct iovec iov[6] = {
            {&oh, sizeof oh},       {&r, sizeof r},        {out.data, (size_t)n_out},
            {err.data, (size_t)n_err}, {chan.data, (size_t)n_chan}, {(void *)fault_text, fault_len},
        };
        if (write_full(fout, iov, 6) != 0) {
            raise_step("write result");
            break;
        }
        if (stat(scratch, &st) == 0 && (st.st_mtim.tv_sec != scratch_mtime.tv_sec ||
                                        st.st_mtim.tv_nsec != scratch_mtime.tv_nsec)) {
            ret = PyLong_FromLong(2);
            break;
        }
    }
    if (in.data) {
        memset(in.data, 0, in.cap);
        free(in.data);
    }
    free(out.data);
    free(err.data);
    free(chan.data);
    return ret;
}

static PyMethodDef methods[] = {
    {"probe", pb_probe, METH_NOARGS, probe_doc},
    {"enter_namespaces", pb_enter_namespaces, METH_VARARGS, enter_namespaces_doc},
    {"mount_tmpfs", pb_mount_tmpfs, METH_VARARGS, mount_tmpfs_doc},
    {"bind_mount", pb_bind_mount, METH_VARARGS, bind_mount_doc},
    {"landlock_ruleset", pb_landlock_ruleset, METH_VARARGS, landlock_ruleset_doc},
    {"worker_filter", pb_worker_filter, METH_NOARGS, worker_filter_doc},
    {"set_pdeathsig", pb_set_pdeathsig, METH_VARARGS, set_pdeathsig_doc},
    {"confine", pb_confine, METH_VARARGS, confine_doc},
    {"serve", pb_serve, METH_VARARGS, serve_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_confine",
    "Native confinement for pairbench_async's sandbox (see sandbox/confine.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__confine(void)
{
    return PyModule_Create(&module);
}
