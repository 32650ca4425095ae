/*
 * pairbench_async.sandbox.native -- the native half of the sandbox.
 *
 *** Theory of operation ***
 *
 * Untrusted programs (candidate repairs, and references too) run in a tree of
 * four kinds of processes, all started from one small Python program, the text
 * of pairbench_async/sandbox/worker.py passed with -c (so no code object names
 * the package's path), which loads this module by path:
 *
 *   pool (asyncio, the evaluator)
 *     └─ W  worker: `python -S -s -P -B -X utf8 -c <worker.py's source> CONFIG`
 *            (sandbox/process.py), one per core, started in a session of its own
 *            with a fixed environment. Enters the namespaces, forks I, then only
 *            waits for it.
 *        └─ I  PID 1 of the worker's own PID namespace: builds the minimal root and
 *               serves the pool's frames. Never reads a program or a test.
 *           └─ Z  program zygote, forked from I for each program: joins the
 *                  worker's cgroups, confines itself, then reads and compiles
 *                  the program and forks a child for its tests (one resident
 *                  child for them in turn, see "Resident child" at serve(), or
 *                  one per test).
 *              └─ C  test child: confines itself further, runs the program, exits.
 *
 * Lifetimes, by construction: I is the init of a PID namespace, so when I dies,
 * for whatever reason, the kernel kills every process of the namespace and I's
 * exit waits until they are gone; whatever a test child did to its signals,
 * session, process group or parent-death signal, it cannot leave the namespace
 * (no setns, no CAP_SYS_ADMIN). I dies with W: PDEATHSIG, set after the last
 * credential change, and a pidfd of W that I checks once right after setting
 * it (W may have died before). The tree dies with the pool's process in two
 * ways: PDEATHSIG on W, which follows the parent *thread* and is easily lost
 * (a host such as a Ray actor SIGKILLed while W waits), and the pidfd watch:
 * W opens a pidfd of the pool's process while that is surely its parent, and
 * I keeps it and polls it beside its frame pipe, and, while a program runs,
 * beside a pidfd of the zygote (worker.py's wait_for(), wait_for_zygote()); once
 * the pool's process has died, I kills the zygote, reaps, and exits from
 * wherever it was blocked, and the kernel ends the namespace. The pool's stop
 * sends QUIT and SIGTERM (on which W SIGKILLs I), and SIGKILLs the worker's
 * session after 5 s. After every program I also kills whatever is left in the
 * namespace but itself (kill(-1)) and reaps it, so nothing of one program
 * outlives its zygote. Without namespaces (a fallback) W serves itself, as the
 * subreaper of everything below it, with the same pidfd watch. The child sees
 * only the namespace's processes, in a fresh /proc.
 *
 * W, once at start: opens the cgroup files the zygotes need (below), then a
 * fresh network namespace (no interface but a down loopback), IPC namespace (no
 * SysV object or POSIX queue of the host), private mount namespace and PID
 * namespace, in one unshare(); a user namespace too only when not root, mapping
 * only the caller's own uid (namespace root is never host root).
 *
 * I, once at start (worker.py's build_root(), then setup()):
 *   - the minimal root, as isolate and nsjail build theirs: a small tmpfs holding
 *     only the read allowlist (the standard library's entries but site-packages,
 *     lib-dynload, libpython, the shared-library directories, ld.so.cache,
 *     zoneinfo and localtime, the allowed packages), each bound read-only at its
 *     own path (symbolic links on the way recreated, directories given the host's
 *     times so the import system's cached listings stay valid), four device
 *     files (null, zero, urandom, random), a fresh read-only /proc of the PID
 *     namespace (mounted before the pivot: in a user namespace the kernel allows
 *     a new proc only while a full one is visible) and /sandbox/scratch; then
 *     pivot_root into it and the host's root detached: a host path outside it can
 *     be neither opened nor stat'ed;
 *   - the scratch tmpfs at /sandbox/scratch (64 MB), owned by the sandbox uid, the
 *     only writable place; mounted afresh for every program (no inode number,
 *     time or file of one program reaches the next);
 *   - the Landlock ruleset, built once, as a second layer: read/execute beneath
 *     the read allowlist, everything beneath /sandbox (a rule on the scratch
 *     mount's own root would not survive its remount), read and write of the
 *     device files; no TCP; signals and abstract sockets scoped (ABI 6);
 *   - the worker seccomp filter (a deny-list), inherited by Z and C, which add
 *     stricter filters of their own (see allowlist.h): mount and umount2 stay
 *     allowed to I alone, for the scratch remount.
 *
 * Z, before it reads a byte of the program: joins the worker's memory, pids (and
 * freezer) cgroups where the pool made them (as root: cgroup v1 or v2), while
 * still privileged, through descriptors W opened; then (confine_zygote()) the
 * sandbox uid/gid when root, an empty capability set, no_new_privs, the Landlock
 * domain, non-dumpable, the zygote allowlist filter, then PDEATHSIG. Only then
 * does it compile the program, under the program's memory budget and a CPU
 * budget (a compile that runs out is the program's TLE, never a sandbox fault),
 * with no process creation possible (RLIMIT_NPROC 0 until the first test), and
 * pre-import, for speed, the modules its bytecode names that are on an
 * allowlist of side-effect-free standard-library modules or are the top level
 * of an allowed package (worker.py's PREIMPORT): so even an allowed package's
 * import-time code runs confined, as the sandbox uid, and nothing a program
 * names outside the allowlist is imported on its behalf at all.
 *
 * C, per test, in one C call (serve() below; ~40 us cheaper than separate
 * Python calls, and no window where half the layers are on): stdio redirection,
 * chdir to the scratch directory, rlimits (CPU, address space = the zygote's
 * size + budget, file size = output cap, open files, processes, stack, no core),
 * non-dumpable (the Landlock domain is Z's, inherited), the child's small
 * per-test filter on top of Z's allowlist (no new process, signals and prlimit
 * only to itself, no memory files, no chmod), then, after the last credential
 * change (the kernel clears it on one), PDEATHSIG and a getppid() check.
 * Threads still work, within the pids cgroup's limit.
 *
 * Memory, by construction where the pool may make cgroups: Z and C are in the
 * worker's memory cgroup (I is not, so its OOM killer never picks the worker).
 * Before each fork Z sets the cgroup's limit to what it holds then plus the
 * program's budget and resets its peak; after the test it reports the peak
 * above that base (memory_kb) and whether the OOM killer struck (MLE). The
 * cgroup counts heap, the scratch tmpfs, the memory files and page cache alike.
 * Without a cgroup, RLIMIT_AS bounds the heap and the zygote counts by hand what
 * a test left in scratch and its stdout and stderr files.
 *
 * What a test sees of other tests: the scratch directory is emptied after every
 * test and before a zygote's first one, whatever the program left there, with
 * openat/unlinkat (empty_tree(): no depth or path length can make it fail), and
 * its root's mode and times are reset (reset_scratch_root()); Z wipes every
 * buffer that held a test's input, output or report before it forks the next
 * child; expected outputs never leave the evaluator. C holds only stdin, stdout,
 * stderr and its report channel (close_range): four memfds made fresh for every
 * test (a shared one would carry its times, status flags and locks from test to
 * test), stdin sealed against any write or growth. I never reads a test: frames
 * meant for a zygote that died are spliced to /dev/null.
 *
 * Faults: a zygote that dies on a signal while one of its program's children ran
 * is the program's doing (that test is RE with the signal named, or MLE after an
 * OOM kill; the program is loaded again for the rest); only what the pool can
 * show is not the program's is SF.
 *
 * Why an extension module and not an exec'ed helper binary: the expensive
 * part of a test run is starting an interpreter (~45 ms here); forking a
 * warm zygote costs ~1 ms. An exec'ed helper would force an interpreter
 * start per test, so the confinement is a library the forked child calls.
 *
 * Errors, function by function (every one with arguments raises TypeError
 * for arguments of the wrong type; "OSError" is errno plus the failing step,
 * e.g. "pivot_root: Operation not permitted"):
 *   - probe() returns a dict (landlock_abi, seccomp, arch); nothing of its own.
 *   - enter_namespaces, mount_tmpfs, bind_mount, pivot, mount_proc, unmount,
 *     new_pid_namespace, compile_cpu_guard, set_pdeathsig, empty_dir,
 *     make_readonly, set_subreaper return None, or raise OSError when their
 *     system call fails; confine_zygote too, and OSError (ESRCH, "parent
 *     gone") when its parent is no longer parent_pid.
 *   - landlock_ruleset returns (fd, abi), (-1, 0) when the kernel has no
 *     Landlock; an absent or unreadable path is skipped; OSError when a
 *     Landlock call fails; what Python raised when a path list is not a
 *     sequence of str (e.g. TypeError, UnicodeEncodeError).
 *   - worker_filter returns the filter's length; RuntimeError when it would
 *     be too long, OSError when it cannot be attached.
 *   - serve returns 0 on END, QUIT or end of input, and 1 in the confined
 *     child; OSError for a failing step (read frame, read payload, test
 *     memfds, memory cgroup limit, fork, write result, empty scratch),
 *     ValueError for a frame that is not TEST, MemoryError when a buffer
 *     cannot grow.
 * A failure while a test child confines itself (do_confine()) raises
 * nothing: the child must not run the program, so it reports the step on
 * the handshake pipe and exits, and the pool turns that into a
 * sandbox-fault verdict, never a program verdict.
 * The "confined" handshake byte is written only after every layer is on,
 * and its descriptor is closed before the program runs, so the program
 * cannot forge it. Comparison of outputs happens in the evaluator (Python),
 * never here and never in the child.
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
#include <dirent.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
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
#ifndef __NR_process_madvise
#define __NR_process_madvise 440
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#define PB_F_SETPIPE_SZ 1031

/* mount_setattr(2); the system headers may predate it. */
struct pb_mount_attr {
    uint64_t attr_set;
    uint64_t attr_clr;
    uint64_t propagation;
    uint64_t userns_fd;
};
#define PB_MOUNT_ATTR_RDONLY 0x00000001ULL
#define PB_MOUNT_ATTR_NOSUID 0x00000002ULL
#define PB_MOUNT_ATTR_NODEV 0x00000004ULL
#define PB_AT_RECURSIVE 0x8000

/* Add read-only (and `extra`) to the mount at path, and to every mount beneath it
 * when recursive. mount_setattr changes only these flags: a remount would have to
 * repeat the locked atime and noexec flags a user namespace inherits, or fail. */
static int set_readonly(const char *path, int recursive, uint64_t extra)
{
    struct pb_mount_attr attr = {.attr_set = PB_MOUNT_ATTR_RDONLY | extra};
    return (int)syscall(__NR_mount_setattr, AT_FDCWD, path, recursive ? PB_AT_RECURSIVE : 0,
                        &attr, sizeof attr);
}

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

/* Syscalls no evaluated program (and no worker or zygote after its set-up)
 * needs. Missing numbers on an architecture are skipped at build time.
 * Grouped by what they would reach: the kernel's own state, other processes,
 * the host's IPC objects, other sockets, file-system watches. */
static const int worker_denied[] = {
    /* other processes, namespaces, mounts */
    __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_process_madvise,
    __NR_pidfd_getfd, __NR_kcmp, __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot,
    __NR_unshare, __NR_setns, __NR_move_mount, __NR_open_tree, __NR_fsopen, __NR_fsconfig,
    __NR_fsmount, __NR_fspick, __NR_mount_setattr,
    /* the kernel's own state */
    __NR_kexec_load,
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
    __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_bpf, __NR_keyctl, __NR_add_key,
    __NR_request_key, __NR_perf_event_open, __NR_personality, __NR_reboot, __NR_swapon,
    __NR_swapoff, __NR_acct, __NR_syslog, __NR_settimeofday, __NR_clock_settime,
    __NR_clock_adjtime, __NR_adjtimex, __NR_quotactl, __NR_open_by_handle_at,
    __NR_name_to_handle_at, __NR_userfaultfd, __NR_sethostname, __NR_setdomainname,
    __NR_vhangup, __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
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
    /* file ownership and attributes (chmod is refused to the test child only: the
     * zygote needs it to empty a scratch directory the program made unreadable) */
    __NR_chown, __NR_fchown, __NR_lchown, __NR_fchownat, __NR_setxattr, __NR_lsetxattr,
    __NR_fsetxattr, __NR_removexattr, __NR_lremovexattr, __NR_fremovexattr, __NR_mknod,
    __NR_mknodat,
    /* System V and POSIX IPC: the worker has its own IPC namespace too */
    __NR_msgget, __NR_msgsnd, __NR_msgrcv, __NR_msgctl, __NR_semget, __NR_semop, __NR_semctl,
    __NR_semtimedop, __NR_shmget, __NR_shmat, __NR_shmctl, __NR_shmdt, __NR_mq_open,
    __NR_mq_unlink, __NR_mq_timedsend, __NR_mq_timedreceive, __NR_mq_notify,
    __NR_mq_getsetattr,
    /* sockets: no socket() at all, and no way to address one; an unnamed
     * socketpair (asyncio's self-pipe) keeps working */
    __NR_socket, __NR_connect, __NR_bind, __NR_listen, __NR_accept, __NR_accept4,
    __NR_sendmsg, __NR_sendmmsg,
    /* larger socket buffers are kernel memory RLIMIT_AS does not count */
    __NR_setsockopt,
    /* another process's priority, scheduling class, CPUs or I/O priority (of the
     * same uid: a zygote, or anything found through /proc) */
    __NR_setpriority, __NR_sched_setscheduler, __NR_sched_setparam, __NR_sched_setattr,
    __NR_sched_setaffinity, __NR_ioprio_set,
    /* watching the file system */
#ifdef __NR_inotify_init
    __NR_inotify_init,
#endif
    __NR_inotify_init1, __NR_inotify_add_watch, __NR_fanotify_init, __NR_fanotify_mark,
};

#define MAX_FILTER 320

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

/* Argument n, all 64 bits, must be 0, else EPERM: sendto's destination address
 * (argument 4: NULL is send() on an already connected, unnamed socket), or
 * sched_setattr's pid (argument 0: the caller itself). Six
 * instructions, each path ending in a return. */
static void emit_arg_zero(struct filter *f, int n)
{
    emit(f, LOAD(ARG_LO(n)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2));
    emit(f, LOAD(ARG_HI(n)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
    emit(f, RET_ERRNO(EPERM));
    emit(f, RET_ALLOW);
}

/* The zygote's allowlist and the test child's filter: the whole seccomp policy of
 * Z and C (the worker's filter below is the floor beneath both). */
#include "allowlist.h"

/* if nr == N: if (arg0 low != value) errno, reloading nr afterwards. */
static void emit_socket_family(struct filter *f, int nr)
{
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 4));
    emit(f, LOAD(ARG_LO(0)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0));
    emit(f, RET_ERRNO(EAFNOSUPPORT));
    emit(f, RET_ALLOW);
}

/* The worker's filter: everything the set-up needed is done by now, except
 * (serving) what the worker needs for each program: mount and umount2 for a fresh
 * scratch tmpfs, setns and unshare for a fresh PID namespace. Nothing below the
 * worker can use them (no capability, and the zygote's allowlist has none). */
static int build_worker_filter(struct filter *f, int serving)
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
    emit_socket_family(f, __NR_socketpair);
    /* A pipe grown to 1 MiB (F_SETPIPE_SZ) is kernel memory RLIMIT_AS does not
     * count: with the open-file limit, a program could hold tens of MiB. */
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fcntl, 0, 4));
    emit(f, LOAD(ARG_LO(1)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, PB_F_SETPIPE_SZ, 0, 1));
    emit(f, RET_ERRNO(EPERM));
    emit(f, RET_ALLOW);
    /* sendto with a destination address would reach a named socket; without one
     * it is send() on an already connected (unnamed) socket. */
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendto, 0, 6));
    emit_arg_zero(f, 4);
    /* sched_setattr on itself (pid 0) only: the zygote's time slice (pb_timekeeper) */
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_setattr, 0, 6));
    emit_arg_zero(f, 0);
    for (i = 0; i < sizeof(worker_denied) / sizeof(worker_denied[0]); i++) {
        if (serving && (worker_denied[i] == __NR_mount || worker_denied[i] == __NR_umount2 ||
                        worker_denied[i] == __NR_setns || worker_denied[i] == __NR_unshare))
            continue;
        emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)worker_denied[i], 0, 1));
        emit(f, RET_ERRNO(EPERM));
    }
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
             "enter_namespaces(user: bool, pid: bool) -> None\n\n"
             "Move the calling (single-threaded) worker into a fresh network, IPC and UTS\n"
             "namespace (host name \"sandbox\") and private mount namespace; with pid=True its next child is\n"
             "the init (PID 1) of a fresh PID namespace. With user=True (not root) a user\n"
             "namespace is created first, mapping only the caller's own uid and gid:\n"
             "namespace root is never mapped to host root.");

static PyObject *pb_enter_namespaces(PyObject *self, PyObject *args)
{
    (void)self;
    int user, pid;
    if (!PyArg_ParseTuple(args, "pp", &user, &pid))
        return NULL;
    uid_t uid = getuid();
    gid_t gid = getgid();
    int flags = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
                (user ? CLONE_NEWUSER : 0) | (pid ? CLONE_NEWPID : 0);
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
    /* The host's name is not the program's business (a UTS namespace of its own). */
    if (sethostname("sandbox", 7) != 0 || setdomainname("sandbox", 7) != 0)
        return raise_step("sethostname");
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
             "bind_mount(source, target, devices=False) -> None\n\n"
             "Recursively bind source onto target, read-only and nosuid, in the worker's\n"
             "mount namespace: how the minimal root gets each path of the read allowlist.\n"
             "nodev too unless devices (the few /dev files the root holds).");

static PyObject *pb_bind_mount(PyObject *self, PyObject *args)
{
    (void)self;
    const char *source, *target;
    int devices = 0;
    if (!PyArg_ParseTuple(args, "ss|p", &source, &target, &devices))
        return NULL;
    if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0)
        return raise_step("bind mount");
    if (set_readonly(target, 1, PB_MOUNT_ATTR_NOSUID | (devices ? 0 : PB_MOUNT_ATTR_NODEV)) != 0)
        return raise_step("read-only bind");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(pivot_doc,
             "pivot(new_root) -> None\n\n"
             "Make new_root (a mount point) the root of the worker's mount namespace and\n"
             "detach the host's root beneath it, so that no host path outside what was\n"
             "bound into new_root can be opened or stat'ed by anything started below.");

static PyObject *pb_pivot(PyObject *self, PyObject *args)
{
    (void)self;
    const char *root;
    if (!PyArg_ParseTuple(args, "s", &root))
        return NULL;
    if (chdir(root) != 0)
        return raise_step("chdir new root");
    /* pivot_root(".", "."): the old root is stacked on the new one and detached
     * at once, so no directory for it is needed in the new root. */
    if (syscall(__NR_pivot_root, ".", ".") != 0)
        return raise_step("pivot_root");
    if (umount2(".", MNT_DETACH) != 0)
        return raise_step("detach old root");
    if (chdir("/") != 0)
        return raise_step("chdir /");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(mount_proc_doc,
             "mount_proc(path) -> None\n\n"
             "Mount a fresh, read-only proc at path, from inside the worker's PID namespace:\n"
             "it shows only that namespace's processes (subset=pid where the kernel has it:\n"
             "no host-wide files such as /proc/sys or /proc/meminfo).");

static PyObject *pb_mount_proc(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path))
        return NULL;
    unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY;
    if (mount("proc", path, "proc", flags, "subset=pid,hidepid=invisible") != 0 &&
        mount("proc", path, "proc", flags, "hidepid=2") != 0 &&
        mount("proc", path, "proc", flags, NULL) != 0)
        return raise_step("mount proc");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(new_pid_namespace_doc,
             "new_pid_namespace(own_ns_fd) -> None\n\n"
             "Make the caller's next child the init (PID 1) of a fresh PID namespace, nested\n"
             "in the caller's own (own_ns_fd: its /proc/self/ns/pid, which resets what an\n"
             "earlier call set). The worker gives each program's zygote one: it dies with\n"
             "everything below it, its pid counter starts afresh, and as init it ignores\n"
             "every signal its children could send it.");

static PyObject *pb_new_pid_namespace(PyObject *self, PyObject *args)
{
    (void)self;
    int fd;
    if (!PyArg_ParseTuple(args, "i", &fd))
        return NULL;
    if (syscall(__NR_setns, fd, CLONE_NEWPID) != 0)
        return raise_step("setns own PID namespace");
    if (unshare(CLONE_NEWPID) != 0)
        return raise_step("unshare PID namespace");
    Py_RETURN_NONE;
}

#define EXIT_COMPILE_CPU 124

static void exit_on_cpu_limit(int sig)
{
    (void)sig;
    _exit(EXIT_COMPILE_CPU);
}

PyDoc_STRVAR(compile_cpu_guard_doc,
             "compile_cpu_guard(on) -> None\n\n"
             "While on, the soft CPU limit's SIGXCPU ends the process at once with exit status\n"
             "124: a zygote is the init of its PID namespace, and init ignores a signal left\n"
             "at its default action, so without this a compile past its CPU budget would\n"
             "run on. Off restores the default (ignored again: nothing a child sends it then\n"
             "can end it).");

static PyObject *pb_compile_cpu_guard(PyObject *self, PyObject *args)
{
    (void)self;
    int on;
    if (!PyArg_ParseTuple(args, "p", &on))
        return NULL;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on ? exit_on_cpu_limit : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGXCPU, &sa, NULL) != 0)
        return raise_step("sigaction SIGXCPU");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(unmount_doc, "unmount(path) -> None\n\nDetach the mount at path (MNT_DETACH).");

static PyObject *pb_unmount(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path))
        return NULL;
    if (umount2(path, MNT_DETACH) != 0)
        return raise_step("umount");
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
             "worker_filter(serving=False) -> int\n\nSet no_new_privs and attach the worker's\n"
             "seccomp filter (with serving, mount, umount2, setns and unshare stay allowed: the\n"
             "worker's fresh scratch and PID namespace per program); returns its length in\n"
             "BPF instructions.");

static PyObject *pb_worker_filter(PyObject *self, PyObject *args)
{
    (void)self;
    int serving = 0;
    if (!PyArg_ParseTuple(args, "|p", &serving))
        return NULL;
    struct filter f;
    if (build_worker_filter(&f, serving) != 0) {
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

/* The identity and privilege layers shared by the zygote and the test child:
 * the sandbox uid/gid (uid < 0 keeps the identity), no capability, no_new_privs,
 * a Landlock domain (nested when already in one), non-dumpable. Returns the
 * failing step's name, or NULL; errno is kept. */
static const char *drop_privileges(long uid, long gid, int ruleset)
{
    if (uid >= 0) {
        if (setgroups(0, NULL) != 0)
            return "setgroups";
        if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0)
            return "setresgid";
        if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0)
            return "setresuid";
    }
    if (drop_capabilities() != 0)
        return "capset";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return "no_new_privs";
    if (ruleset >= 0 && syscall(__NR_landlock_restrict_self, ruleset, 0) != 0)
        return "landlock_restrict_self";
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return "PR_SET_DUMPABLE";
    return NULL;
}

/* Everything the test child does before running the program; returns the
 * failing step's name, or NULL when every layer is on. errno is kept. */
struct child_spec {
    int fds[4];
    int ctl[2]; /* a resident child's go (read) and done (write) pipes, -1: none */
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
    /* (the pipes are above 100: no dup2 here lands on another's number) */
    if (c->ctl[0] >= 0 && (dup2(c->ctl[0], 4) < 0 || dup2(c->ctl[1], 5) < 0))
        return "dup2 control";
    if (chdir(c->cwd) != 0)
        return "chdir scratch";
    if (c->full) {
        if (set_limit(RLIMIT_CORE, 0, 0) != 0)
            return "RLIMIT_CORE";
        for (i = 0; i < 7; i++) {
            if (i == 1 || c->lim[i] == 0)
                continue;
            unsigned long long soft = c->lim[i];
            /* a resident child's go and done pipes (fds 4 and 5) and the copies of its fds
             * 0-3 its harness keeps to restore them between tests (worker.Interpreter) are
             * not the program's files */
            if (i == 4 && c->ctl[0] >= 0)
                soft += 2 + 4;
            unsigned long long hard = i == 0 ? c->lim[1] : soft;
            if (set_limit(resources[i], soft, hard) != 0)
                return names[i];
        }
        const char *step = drop_privileges(c->uid, c->gid, c->ruleset);
        if (step != NULL)
            return step;
        struct filter f;
        if (build_child_filter(&f, (uint32_t)getpid()) != 0) {
            errno = E2BIG;
            return "child seccomp filter too long";
        }
        if (attach_filter(&f) != 0)
            return "seccomp child filter";
    }
    /* Last, because the kernel clears the parent-death signal on every credential
     * change above; then make sure the zygote did not die before it was set. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        return "PR_SET_PDEATHSIG";
    if (getppid() != c->parent) {
        errno = ESRCH;
        return "parent gone";
    }
    if (write(c->handshake, "K", 1) != 1)
        return "handshake";
    /* Nothing above stdio and the result channel (and a resident child's go and done
     * pipes) survives: not the worker's control pipes, not the ruleset, not the
     * handshake. */
    unsigned first = c->ctl[0] >= 0 ? 6U : 4U;
    if (syscall(__NR_close_range, first, ~0U, 0) != 0) {
        long fd, max = sysconf(_SC_OPEN_MAX);
        for (fd = (long)first; fd < max; fd++)
            close((int)fd);
    }
    return NULL;
}

PyDoc_STRVAR(kept_doc,
             "kept(current, snapshot) -> bool\n\n"
             "Whether every key of the dict `snapshot` maps, in the dict `current`, to the very same\n"
             "object. Borrowed references only: no reference count is touched, so a resident child's\n"
             "check of its start state (its builtins and sys.modules: hundreds of objects on the\n"
             "zygote's pages) costs no copy-on-write fault. The same check in Python increfs every\n"
             "value: ~0.6 ms of faults at a child's first restore.");

static PyObject *pb_kept(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *current, *snapshot;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &current, &PyDict_Type, &snapshot))
        return NULL;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(snapshot, &pos, &key, &value)) {
        PyObject *now = PyDict_GetItemWithError(current, key);
        if (now != value) {
            if (now == NULL && PyErr_Occurred())
                return NULL;
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

PyDoc_STRVAR(timekeeper_doc,
             "timekeeper() -> int\n\n"
             "Give the calling zygote a short time slice (0.1 ms), and its children the\n"
             "default one (SCHED_FLAG_RESET_ON_FORK): the zygote times each test and\n"
             "stops it at its CPU limit, and under EEVDF (Linux 6.6+) a task woken while a\n"
             "child computes waits for the child's slice (~3 ms here) unless its own is\n"
             "shorter (Linux 6.12+). Best effort: 0, or the errno (older kernels ignore the\n"
             "slice; a host filter may refuse the call).");

static PyObject *pb_timekeeper(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    struct {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
    } attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr; /* 48: SCHED_ATTR_SIZE_VER0 */
    attr.policy = SCHED_OTHER;
    attr.flags = 0x01; /* SCHED_FLAG_RESET_ON_FORK */
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0); /* kept: a lower one needs a privilege */
    if (errno != 0)
        return PyLong_FromLong(errno);
    attr.nice = nice;
    attr.runtime = 100000; /* ns; the kernel clamps a fair task's slice to 0.1-100 ms */
    if (syscall(__NR_sched_setattr, 0, &attr, 0) != 0)
        return PyLong_FromLong(errno);
    return PyLong_FromLong(0);
}

PyDoc_STRVAR(confine_zygote_doc,
             "confine_zygote(uid, gid, ruleset_fd, parent_pid) -> None\n\n"
             "Confine a program zygote before it reads or imports anything of the\n"
             "program: the unprivileged uid/gid (uid < 0 keeps the identity), an empty\n"
             "capability set, no_new_privs, the Landlock domain, a non-dumpable flag and,\n"
             "after the last credential change, PDEATHSIG (checked against parent_pid).\n"
             "The worker's seccomp filter and this Landlock domain are inherited by the\n"
             "test child, which adds rlimits and the no-fork filter on top.");

static PyObject *pb_confine_zygote(PyObject *self, PyObject *args)
{
    (void)self;
    long uid, gid, parent;
    int ruleset;
    if (!PyArg_ParseTuple(args, "llil", &uid, &gid, &ruleset, &parent))
        return NULL;
    const char *step = drop_privileges(uid, gid, ruleset);
    if (step != NULL)
        return raise_step(step);
    /* after the last credential change, which clears it */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        return raise_step("PR_SET_PDEATHSIG");
    if (getppid() != (pid_t)parent) {
        errno = ESRCH;
        return raise_step("parent gone");
    }
    /* last: the allowlist of sandbox/allowlist.h, before a byte of the program is read */
    if (attach_zygote_filter() != 0)
        return raise_step("seccomp zygote filter");
    Py_RETURN_NONE;
}

/* Remove everything beneath the directory open as `dirfd` (which stays).
 * Iterative and path-free: it holds at most two directory descriptors, walks
 * with openat/unlinkat relative to them (so no depth or path length can make
 * it fail) and keeps the names of the directories it descended on a heap
 * stack. A directory the program made unreadable or unwritable is given mode
 * 0700 first. Only ever run when no process of the program is alive. */
static int empty_tree(int dirfd)
{
    char **stack = NULL;
    size_t depth = 0, cap = 0;
    long budget = 10L * 1000 * 1000; /* operations; far above a 4096-inode tmpfs */
    int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0), rc = -1;
    if (cur < 0)
        return -1;
    while (budget-- > 0) {
        int fd = openat(cur, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == EACCES && fchmod(cur, 0700) == 0)
            fd = openat(cur, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            goto out;
        DIR *d = fdopendir(fd);
        if (d == NULL) {
            close(fd);
            goto out;
        }
        char *sub = NULL;
        struct dirent *e;
        int failed = 0, seen = 0;
        while ((e = readdir(d)) != NULL && budget-- > 0) {
            const char *n = e->d_name;
            if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0)))
                continue;
            seen = 1;
            if (unlinkat(cur, n, 0) == 0 || errno == ENOENT)
                continue;
            if (errno == EACCES || errno == EPERM) {
                /* the directory itself lost its write or search bit */
                if (fchmod(cur, 0700) == 0 && (unlinkat(cur, n, 0) == 0 || errno == ENOENT))
                    continue;
            }
            if (errno != EISDIR && errno != EPERM && errno != EACCES) {
                failed = 1;
                break;
            }
            if (unlinkat(cur, n, AT_REMOVEDIR) == 0)
                continue;
            sub = strdup(n); /* a non-empty directory: descend */
            if (sub == NULL)
                failed = 1;
            break;
        }
        closedir(d);
        if (failed)
            goto out;
        if (sub != NULL) {
            int next = openat(cur, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0 && errno == EACCES && fchmodat(cur, sub, 0700, 0) == 0)
                next = openat(cur, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0) {
                free(sub);
                goto out;
            }
            if (depth == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                char **ns = realloc(stack, ncap * sizeof *ns);
                if (ns == NULL) {
                    free(sub);
                    close(next);
                    goto out;
                }
                stack = ns;
                cap = ncap;
            }
            stack[depth++] = sub;
            close(cur);
            cur = next;
            continue;
        }
        if (seen) /* a pass that removed entries may have missed some: look again */
            continue;
        if (depth == 0) { /* the top directory is empty */
            rc = 0;
            goto out;
        }
        int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (up < 0)
            goto out;
        close(cur);
        cur = up;
        char *name = stack[--depth];
        int gone = unlinkat(cur, name, AT_REMOVEDIR);
        free(name);
        if (gone != 0)
            goto out;
    }
    errno = ELOOP;
out:;
    int saved = errno;
    while (depth > 0)
        free(stack[--depth]);
    free(stack);
    close(cur);
    errno = saved;
    return rc;
}

PyDoc_STRVAR(empty_dir_doc,
             "empty_dir(path) -> None\n\nRemove everything beneath path, whatever its depth,\n"
             "names or modes (see empty_tree in the C file).");

static PyObject *pb_empty_dir(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path))
        return NULL;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return raise_step("open scratch");
    int rc = empty_tree(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    if (rc != 0)
        return raise_step("empty scratch");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(make_readonly_doc,
             "make_readonly(path, recursive) -> None\n\n"
             "Mark the mount at path (and, recursively, every mount beneath it) read-only\n"
             "and nosuid with mount_setattr(2), which changes only those flags: unlike a\n"
             "remount it works on the locked mounts a user namespace inherits.");

static PyObject *pb_make_readonly(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    int recursive;
    if (!PyArg_ParseTuple(args, "sp", &path, &recursive))
        return NULL;
    if (set_readonly(path, recursive, PB_MOUNT_ATTR_NOSUID) != 0)
        return raise_step("mount_setattr read-only");
    Py_RETURN_NONE;
}

PyDoc_STRVAR(set_subreaper_doc,
             "set_subreaper() -> None\n\nBecome the child subreaper of everything started beneath\n"
             "(PR_SET_CHILD_SUBREAPER), so that a test child orphaned by its zygote is\n"
             "reparented to this worker, which reaps it, instead of to init.");

static PyObject *pb_set_subreaper(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        return raise_step("PR_SET_CHILD_SUBREAPER");
    Py_RETURN_NONE;
}

/*** The zygote's test loop ***/

/* The wire protocol between the pool (process.py, jobs.py, results.py), the worker
 * script (worker.py) and this loop, declared here once: the module exports every op,
 * flag and format below (PyInit_native), and the Python side takes them from it.
 *
 * Frames: a frame_header ("<BI": op, payload length), then the payload. Pool -> worker:
 * LOAD (a program), TEST (a test_head, then the input), END (the program's tests are
 * done), QUIT. Worker -> pool: READY (its report, JSON), LOADED (1 byte: compiled or
 * not, then the error text), RESULT (a result_block, then stdout, stderr, channel and
 * fault text), ZDIED ("<iB": a zygote's status and whether the OOM killer ran), FATAL
 * (text). */
#define OP_LOAD 1
#define OP_TEST 2
#define OP_END 3
#define OP_QUIT 4
#define OP_READY 10
#define OP_LOADED 11
#define OP_RESULT 12
#define OP_ZDIED 13
#define OP_FATAL 14
#define FRAME_HEADER_FORMAT "<BI"
#define TEST_HEAD_FORMAT "<IIIQQQQIQB"
#define RESULT_FORMAT "<iIqqqqqqqIIII"
#define ZDIED_FORMAT "<iB"
#define FLAG_WALL_TIMEOUT 1
#define FLAG_CONFINED 2
#define FLAG_OOM 4 /* the kernel's OOM killer ran in the program's memory cgroup */
#define FLAG_CPU_TIMEOUT 8 /* the zygote killed the child at its CPU limit */
#define FLAG_TIGHT 16      /* the test ran under the loop rule's tighter (or probe) limit */
#define FLAG_SHARED 32     /* the test ran in a resident child after another test of it */
#define HEAD_START_TIGHT 1 /* test_head.flags: the job already had a TLE elsewhere */
#define HEAD_ISOLATED 2    /* test_head.flags: run it in a child of its own (a re-run) */
/* A resident child's RLIMIT_CPU backstop, past its first test's limit: it is retired
 * (killed between tests) before a test could reach it, see pb_serve */
#define RESIDENT_BACKSTOP_S 30
/* A resident child's test at its CPU limit is interrupted, not killed: the signal (a
 * real-time one no program of the benchmarks uses; the harness raises on it in the
 * program's code), then, past this much more CPU or wall time without its "done", the
 * kill a test of its own would have had at the limit (see pb_serve, "Interrupt") */
#define SIG_INTERRUPT (SIGRTMIN + 3)
#define INTERRUPT_GRACE_CPU_US 2000
#define INTERRUPT_GRACE_WALL_US 200000
#define EXIT_FAULT 121

#pragma pack(push, 1)
struct frame_header {
    uint8_t op;
    uint32_t len;
};
/* The limits of one test, ahead of its input (process.py's _TEST_HEAD). The loop
 * rule (pool.py, jobs.py): until a test of the same job (serial) timed out, a test
 * whose reference time is known runs under min(cpu_ms, max(probe_us, factor x the
 * slowest test of the job this zygote saw finish)); once one did, the next tests run
 * under min(cpu_ms, max(floor_us, ref_tight_us, factor x that slowest test)). Either
 * way 3 x the CPU limit + 1 s of wall at most. The rule's bounds are in us (a bound of
 * 2.5 ms was applied as 3 ms in whole ms), 64-bit so that a build from before has
 * another size and is refused (wire.py), not misread. */
struct test_head {
    uint32_t serial;       /* the pool's job number: the rule's state is per job */
    uint32_t cpu_ms;       /* the test's own CPU limit */
    uint32_t wall_ms;      /* the test's own wall limit */
    uint64_t ref_tight_us; /* floor + factor x the reference's time on the test (0: unknown) */
    uint64_t probe_us;     /* the limit before a timeout (0: none: the reference's time unknown) */
    uint64_t floor_us;     /* the least tight limit */
    uint64_t shared_floor_us; /* the least tight limit of a test after another in a resident
                               * child: no fork and no confinement in its time (in ref_tight_us
                               * it replaces floor_us) */
    uint32_t factor;       /* 0: no loop rule */
    /* a re-run's CPU limit, exactly (0: the rule's, from this zygote's state): the limit a
     * child of its own had at the test's first place (result_block.alone_us), so that the
     * tests run between its two runs cannot change it (pool: process._again_alone) */
    uint64_t pinned_us;
    uint8_t flags;         /* HEAD_START_TIGHT */
};
struct result_block { /* RESULT_FORMAT */
    int32_t status;
    uint32_t flags;
    int64_t cpu_us, wall_us, maxrss_kb, base_kb;
    /* the test's peak in the program's memory cgroup above what it held at the
     * fork (heap, scratch, memory files, page cache), or -1 with no cgroup */
    int64_t cg_peak_kb;
    /* what the test left in scratch and its stdout and stderr files: counted by
     * hand against the limit where there is no cgroup */
    int64_t held_kb;
    /* the CPU limit a child of its own had at this place (the lone limit), whatever the
     * test ran under: what a re-run of it is pinned to (test_head.pinned_us) */
    int64_t alone_us;
    uint32_t out_len, err_len, chan_len, fault_len;
};
#pragma pack(pop)
_Static_assert(sizeof(struct frame_header) == 1 + 4, "FRAME_HEADER_FORMAT");
_Static_assert(sizeof(struct test_head) == 4 * 4 + 5 * 8 + 1, "TEST_HEAD_FORMAT");
_Static_assert(sizeof(struct result_block) == 2 * 4 + 7 * 8 + 4 * 4, "RESULT_FORMAT");

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

/* A clock in microseconds; -1 when it cannot be read (a child's CPU clock once it is gone). */
static int64_t read_us(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t now_us(void)
{
    return read_us(CLOCK_MONOTONIC);
}

/* The child's CPU time to the microsecond, and whether it could be read so. Read from
 * another process, a running child's process clock moves only at the scheduler's
 * ticks (the kernel accounts a running task's time there, or when it is switched out:
 * 4 ms at HZ=250), so "kill once the clock reaches the limit" killed up to a tick late,
 * ~2 ms on average: on a looping program's tight limits (~5 ms) that was a third of
 * its cost. Stopping the child switches it out, which accounts its time exactly; the
 * caller continues it (SIGCONT) or kills it. Returns the time in us; -1 when the child
 * could not be stopped within 5 ms (uninterruptible sleep: the tick-sampled clock
 * stands); -2 when it ended meanwhile, reaped into *status and *ru. A child that had
 * stopped itself (SIGSTOP, SIGTSTP...) is left stopped, as it would be without this
 * reading, and *self_stopped set: its clock stands, and the caller reads it no more
 * this way (a later SIGSTOP would find no stop to report, give up, and continue it). */
static int64_t exact_cpu_us(pid_t pid, clockid_t clock, int *status, struct rusage *ru,
                            int *self_stopped)
{
    int st0 = 0;
    pid_t w0;
    while ((w0 = wait4(pid, &st0, WUNTRACED | WNOHANG, ru)) < 0 && errno == EINTR)
        ;
    if (w0 == pid) {
        if (!WIFSTOPPED(st0)) {
            *status = st0;
            return -2;
        }
        *self_stopped = 1; /* a stop of its own, not yet reported: ours are consumed */
        return read_us(clock);
    }
    if (kill(pid, SIGSTOP) != 0)
        return -1;
    int64_t give_up = now_us() + 5000;
    for (;;) {
        int st = 0;
        pid_t w = wait4(pid, &st, WUNTRACED | WNOHANG, ru);
        if (w == pid) {
            if (WIFSTOPPED(st))
                break;
            *status = st;
            return -2;
        }
        if ((w < 0 && errno != EINTR) || now_us() > give_up) {
            kill(pid, SIGCONT);
            return -1;
        }
        struct timespec pause = {0, 20000};
        clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, NULL);
    }
    int64_t x = read_us(clock);
    if (x < 0)
        kill(pid, SIGCONT);
    return x;
}

static void close_test_files(int fds[4])
{
    for (int i = 0; i < 4; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

/* stdin, stdout, stderr and the report channel of one test: new memfds, the
 * first holding `input` and sealed against any change (unless `seal` is 0: a resident
 * child's stdin is its inbox, rewritten for each of its tests). */
static int open_test_files(int fds[4], const char *input, size_t n, int seal)
{
    static const char *names[4] = {"pb-stdin", "pb-stdout", "pb-stderr", "pb-channel"};
    close_test_files(fds);
    for (int i = 0; i < 4; i++) {
        /* (a resident child's inbox allows no seal at all: sealed by the program, it could
         * no longer be emptied for the next test) */
        int fd = memfd_create(names[i], MFD_CLOEXEC | (i == 0 && seal ? MFD_ALLOW_SEALING : 0));
        if (fd < 0)
            return -1;
        fds[i] = fd;
    }
    if (n > 0 && pwrite(fds[0], input, n, 0) != (ssize_t)n)
        return -1;
    if (!seal)
        return 0;
    return fcntl(fds[0], F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
}

/* The files of the program's memory cgroup the zygote reads and writes per test,
 * opened by the worker before it dropped privileges (-1: no cgroup). */
struct cgroup_fds {
    int usage, limit, peak, events, stat;
    unsigned long long budget;
};

#define LIMIT_LIFTED (1ULL << 62)         /* v1 and v2 both read it as "no limit" */
#define RECLAIM_ABOVE (8ULL << 20)       /* file cache the cgroup may keep across tests */

static long long read_number(int fd)
{
    char buf[64];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return strtoll(buf, NULL, 10);
}

static int write_number(int fd, unsigned long long value)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%llu", value);
    return pwrite(fd, buf, (size_t)n, 0) == n ? 0 : -1;
}

/* Read a cgroup file whole (up to size - 1 bytes) as text; 0 when it cannot be read. */
static int read_text(int fd, char *buf, size_t size)
{
    ssize_t n = pread(fd, buf, size - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    return 1;
}

/* The number of the line "key N" of a cgroup's key-value text (memory.stat,
 * memory.events, memory.oom_control); 0 without one. */
static long long keyed(const char *text, const char *key)
{
    size_t len = strlen(key);
    for (const char *line = text; line != NULL && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, key, len) == 0 && line[len] == ' ')
            return strtoll(line + len + 1, NULL, 10);
    return 0;
}

/* The OOM kills of memory.oom_control (v1) or memory.events (v2). */
static long long oom_kills(int fd)
{
    char buf[1024];
    return read_text(fd, buf, sizeof buf) ? keyed(buf, "oom_kill") : 0;
}

/* The page cache the cgroup holds (inactive_file + active_file of memory.stat): memory
 * the kernel frees when the limit is reached, so a test must not count it as its own
 * headroom. */
static long long file_cache(int fd)
{
    char buf[4096];
    return read_text(fd, buf, sizeof buf) ? keyed(buf, "inactive_file") + keyed(buf, "active_file")
                                          : 0;
}

/* The scratch root as a fresh tmpfs root: no mode or time a test set survives it. */
static int reset_scratch_root(int fd)
{
    static const struct timespec zero[2] = {{0, 0}, {0, 0}};
    if (fchmod(fd, 0700) != 0)
        return -1;
    return futimens(fd, zero);
}

/* Resident child. A program's tests (serve()'s `resident`) run one after another in
 * one child instead of a child each: forking, its copy-on-write faults and its exit were
 * most of a passing test's cost. The child runs a test, writes its report, signals "done"
 * on its fd 5 and blocks reading its fd 4; the zygote stops it, reads its CPU clock
 * exactly, sends the RESULT, empties and rewinds its stdin (the inbox), stdout, stderr
 * and report files (the same open files as the child's fds 0-3) and the scratch
 * directory, and hands over the next test by writing its input to the inbox, "g" to the
 * child's fd 4 and SIGCONT. Each test keeps its own CPU and wall limits, counted from its
 * handover, and its own memory budget above what the cgroup holds then. Every test after
 * a child's first is flagged FLAG_SHARED. One that ends the child (an exception, an exit,
 * a signal, a wall or OOM kill) is run again at once, in its place, as a new child's
 * first test; a timeout at its CPU limit stands, as a child of its own's would; the pool
 * runs one that ended cleanly and did not pass again alone (HEAD_ISOLATED). The harness
 * re-executes the program's module in a fresh namespace for each test and restores the
 * interpreter-wide state it can (docs/PROTOCOL.md, "One child for a program's tests").
 * At its CPU limit a resident child's test is interrupted rather than killed (pb_serve,
 * "Interrupt"), so a looping program's tests need no fork each; and a test after another
 * runs under the loop rule's shared floor (test_head.shared_floor_us), its CPU having no
 * fork, confinement or exit in it. */
struct resident {
    pid_t pid; /* -1: none */
    int pidfd, go, done;
    int64_t base_us;     /* its CPU time when its last test ended, exact */
    int64_t backstop_us; /* its RLIMIT_CPU */
    long long cg_base;   /* what the memory cgroup held at its fork (-1: no cgroup) */
};

/* The wall limit (ms) of a test held to a tight CPU limit of `cpu_us`: at most 3 x that + 1 s
 * (a looping test waits no longer than its CPU could take), never above its own `wall_ms`. */
static int64_t tight_wall_ms(int64_t cpu_us, int64_t wall_ms)
{
    int64_t w = 3 * cpu_us / 1000 + 1000;
    return w < wall_ms ? w : wall_ms;
}

/* A descriptor moved above 100 (close-on-exec): the child's dup2s onto 4 and 5 never
 * land on another's number. */
static int high_fd(int fd)
{
    if (fd < 0)
        return -1;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    close(fd);
    return moved;
}

/* End the resident child, if any (SIGKILL and reap), and forget it; with `c`, close its
 * files too, and with `cg`, lift the memory cgroup's limit. 0, or -1 when the limit
 * could not be written. */
static int retire(struct resident *rs, struct child_spec *c, struct cgroup_fds *cg)
{
    if (rs->pid > 0) {
        int st;
        kill(rs->pid, SIGKILL);
        while (waitpid(rs->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    int fds[3] = {rs->pidfd, rs->go, rs->done};
    for (int k = 0; k < 3; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    int had = rs->pid > 0 || rs->go >= 0;
    rs->pid = -1;
    rs->pidfd = rs->go = rs->done = -1;
    rs->base_us = 0;
    rs->cg_base = -1;
    if (c != NULL && had)
        close_test_files(c->fds);
    if (cg != NULL && cg->limit >= 0 && had)
        return write_number(cg->limit, LIMIT_LIFTED);
    return 0;
}

PyDoc_STRVAR(
    serve_doc,
    "serve(fin, fout, cwd, limits, uid, gid, ruleset, handshake_w, handshake_r, full,\n"
    "      output_cap, stderr_tail, channel_cap, base_kb, scratch, resident,\n"
    "      cgroup=(usage_fd, limit_fd, peak_fd, events_fd, stat_fd, budget)) -> int\n\n"
    "The zygote's loop, in C so that the zygote touches (and so copies) almost no\n"
    "Python memory between forks. For each TEST frame read from fin: take the\n"
    "test's limits from its head (struct test_head: CPU and wall limits, and the\n"
    "loop rule's tighter ones once a test of the same job timed out), put the rest\n"
    "of its payload in a fresh, sealed stdin memfd (and wipe the buffer), make fresh\n"
    "stdout, stderr and report memfds, fork, confine the child (RLIMIT_CPU: the\n"
    "limit rounded up to whole seconds, a backstop), wait on a pidfd, reading the\n"
    "child's CPU clock whenever it could have reached its CPU limit (SIGKILL at the\n"
    "CPU or the wall limit), wait4 for the rusage, and\n"
    "write one RESULT frame (status, flags, cpu, wall, maxrss, stdout, stderr\n"
    "tail, channel, fault) to fout, wipe every buffer that held the test's data,\n"
    "empty the scratch directory and reset its root's mode and times. With a memory\n"
    "cgroup, each test's limit is what the cgroup holds at the fork (page cache from\n"
    "earlier tests reclaimed first) plus budget, its peak above that is reported, and\n"
    "the limit is lifted once the child is reaped (the zygote's copy of the outputs is\n"
    "not the test's). With resident true, the tests run in one child after another (see\n"
    "\"Resident child\" above) unless a test's head says HEAD_ISOLATED. Returns 1 in a\n"
    "confined child that runs one test, 2 in a resident one (each must run the program and\n"
    "_exit), 0 on END, QUIT or end of input.");

static PyObject *pb_serve(PyObject *self, PyObject *args)
{
    (void)self;
    int fin, fout, hs_r;
    unsigned long long out_cap, err_tail, chan_cap;
    /* the loop rule's state, per job: its serial, whether a test timed out, the
     * slowest test that finished */
    uint32_t serial = 0;
    int tight = 0;
    int64_t slowest_us = 0;
    /* the same, each shared test's time with the fixed cost a child of its own would have
     * added (floor_us - shared_floor_us): "factor x the slowest finished test" for a test
     * with a reference time is then no tighter in a resident child than with a child per
     * test (a shared trivial test takes ~0.1 ms, alone ~1.2 ms) */
    int64_t slowest_lone_us = 0;
    /* a resident child of this job needed the kill after an interrupt (a loop in C code,
     * the signal ignored or blocked): its later tests are killed at their limits */
    int no_interrupt = 0;
    long long base_kb;
    const char *scratch;
    struct child_spec c;
    struct cgroup_fds cg = {-1, -1, -1, -1, -1, 0};
    long long cg_floor = -1; /* the least the memory cgroup held at a fork */
    int resident = 0, in_child = 0;
    struct resident rs = {.pid = -1, .pidfd = -1, .go = -1, .done = -1, .cg_base = -1};
    c.fds[0] = c.fds[1] = c.fds[2] = c.fds[3] = -1;
    c.ctl[0] = c.ctl[1] = -1;
    if (!PyArg_ParseTuple(args, "iis(KKKKKKK)lliiipKKKLsp|(iiiiiK)", &fin, &fout, &c.cwd,
                          &c.lim[0], &c.lim[1], &c.lim[2], &c.lim[3], &c.lim[4], &c.lim[5],
                          &c.lim[6], &c.uid, &c.gid, &c.ruleset, &c.handshake, &hs_r, &c.full,
                          &out_cap, &err_tail, &chan_cap, &base_kb, &scratch, &resident,
                          &cg.usage, &cg.limit, &cg.peak, &cg.events, &cg.stat, &cg.budget))
        return NULL;
    c.parent = getpid();

    /* Every test starts in an empty scratch directory: it is emptied before the
     * first test (a zygote before us may have died mid-test) and after each. */
    int scratch_fd = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (scratch_fd < 0)
        return raise_step("open scratch");
    if (empty_tree(scratch_fd) != 0 || reset_scratch_root(scratch_fd) != 0) {
        raise_step("empty scratch");
        close(scratch_fd);
        return NULL;
    }
    struct buffer in = {0}, out = {0}, err = {0}, chan = {0};
    char fault[512];
    PyObject *ret = NULL;

    for (;;) {
        struct frame_header h;
        int rc = read_full(fin, (char *)&h, sizeof h);
        if (rc == 1 || (rc == 0 && (h.op == OP_END || h.op == OP_QUIT))) {
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
        struct test_head th;
        if (h.len < sizeof th) {
            PyErr_SetString(PyExc_ValueError, "zygote: TEST frame shorter than its head");
            break;
        }
        memcpy(&th, in.data, sizeof th);
        if (th.serial != serial) { /* another job: the loop rule starts afresh */
            serial = th.serial;
            tight = 0;
            slowest_us = slowest_lone_us = 0;
            no_interrupt = 0;
        }
        if (th.flags & HEAD_START_TIGHT)
            tight = 1;
        int64_t cpu_limit_us = (int64_t)th.cpu_ms * 1000;
        int64_t wall_limit_ms = th.wall_ms;
        uint32_t tightened = 0;
        int64_t shared_limit_us = cpu_limit_us; /* the limit if it runs after another test */
        if (th.factor > 0 && (tight || th.probe_us > 0)) {
            /* after a timeout: the tight limit; before one: the probe */
            int64_t t = (int64_t)(tight ? th.floor_us : th.probe_us);
            /* the shared floor only with the reference's time: without it the floor is the
             * whole bound, and a shared test's tail (p99 ~1.5 ms for a trivial one) needs the
             * lone floor's room */
            int64_t ts = (int64_t)(tight ? (th.ref_tight_us > 0 ? th.shared_floor_us : th.floor_us)
                                         : th.probe_us);
            if (tight && (int64_t)th.ref_tight_us > t)
                t = (int64_t)th.ref_tight_us;
            int64_t ref_shared = (int64_t)th.ref_tight_us - (int64_t)th.floor_us + (int64_t)th.shared_floor_us;
            if (tight && th.ref_tight_us > 0 && ref_shared > ts)
                ts = ref_shared;
            /* factor x the slowest finished test: where the reference's time is known, at
             * most the probe (a program cannot buy looser limits by being slow first, and
             * the probe does not depend on the tests run before it) */
            int64_t own = (int64_t)th.factor * (th.probe_us > 0 ? slowest_lone_us : slowest_us);
            if (th.probe_us > 0 && own > (int64_t)th.probe_us)
                own = (int64_t)th.probe_us;
            if (own > t)
                t = own;
            if (own > ts)
                ts = own;
            if (t < cpu_limit_us) {
                cpu_limit_us = t;
                tightened = FLAG_TIGHT;
                wall_limit_ms = tight_wall_ms(t, wall_limit_ms);
            }
            if (ts < shared_limit_us)
                shared_limit_us = ts;
        }
        int64_t lone_limit_us = cpu_limit_us;
        if (th.pinned_us > 0) {
            /* a re-run: the lone limit of its first place, not this moment's state */
            int64_t own_us = (int64_t)th.cpu_ms * 1000;
            int64_t p = (int64_t)th.pinned_us < own_us ? (int64_t)th.pinned_us : own_us;
            lone_limit_us = shared_limit_us = p;
            wall_limit_ms = th.wall_ms;
            if (p < own_us)
                wall_limit_ms = tight_wall_ms(p, wall_limit_ms);
        }
        if (wall_limit_ms < 1)
            wall_limit_ms = 1;
        int alone = !resident || (th.flags & HEAD_ISOLATED);
    redo: /* a test that ended its resident child, run again as a new child's first */
        /* The resident child (see "Resident child" above) takes this test unless the test
         * must run alone, the child ended between tests, or the test could take it near
         * its RLIMIT_CPU backstop (which counts its whole life; tick-sampled, it has been
         * seen ~30 % ahead of the scheduler's clock). */
        if (rs.pid > 0) {
            struct pollfd q = {.fd = rs.pidfd, .events = POLLIN};
            /* nor once the memory cgroup holds more than half a budget beyond what it held at
             * the child's fork (what its tests kept: each test's limit is its own budget
             * above what the cgroup holds at its handover, as at a fork) */
            long long held = rs.cg_base >= 0 ? read_number(cg.usage) : -1;
            if (alone || poll(&q, 1, 0) != 0 ||
                (rs.base_us + lone_limit_us) * 14 / 10 + 1000000 > rs.backstop_us ||
                (held >= 0 && held > rs.cg_base + (long long)(cg.budget / 2))) {
                if (retire(&rs, &c, &cg) != 0) {
                    raise_step("memory cgroup limit");
                    break;
                }
            }
        }
        int failed = 0;
        size_t n_in = h.len - sizeof th;
        if (rs.pid > 0) {
            /* its files were emptied and rewound when its last test ended */
            failed = n_in > 0 && pwrite(c.fds[0], in.data + sizeof th, n_in, 0) != (ssize_t)n_in;
        } else {
            if (c.full) {
                /* the kernel's backstop, in whole seconds, one past the limit: RLIMIT_CPU
                 * goes by tick-sampled time, which on a loaded host has been seen to reach
                 * 1 s at ~0.77 s of the scheduler's own clock (what the limit is); the
                 * zygote's kill above is the limit, this only catches a zygote that fails
                 * (a resident child's is RESIDENT_BACKSTOP_S further: it serves many) */
                c.lim[0] = (unsigned long long)((lone_limit_us + 999999) / 1000000) + 1 +
                           (alone ? 0 : RESIDENT_BACKSTOP_S);
                c.lim[1] = c.lim[0] + 1;
            }
            /* Fresh memory files for every child: a shared one would carry its times,
             * status flags and locks from one test to the next. A lone test's input is
             * sealed, so the program can neither change it nor keep memory in it. */
            failed = open_test_files(c.fds, in.data + sizeof th, n_in, alone) != 0;
        }
        int shared = rs.pid > 0;
        /* (a re-run in place is a new child's first test: the lone limit again) */
        cpu_limit_us = shared ? shared_limit_us : lone_limit_us;
        tightened = cpu_limit_us < (int64_t)th.cpu_ms * 1000 ? FLAG_TIGHT : 0;
        if (!shared) /* (a shared test's input is kept until it has its result: see redo) */
            memset(in.data, 0, h.len); /* the next child must not find this input */
        if (failed) {
            raise_step("test memfds");
            break;
        }

        /* The test's memory limit covers everything the cgroup holds beyond what it
         * held at the fork: heap, scratch files, memory files, page cache. */
        long long cg_base = -1, oom_before = 0;
        if (rs.pid > 0 && rs.cg_base >= 0 && (cg_base = read_number(cg.usage)) >= 0) {
            /* a test in a resident child: its budget above what the cgroup holds now, the
             * zygote's buffers and what the child kept of its earlier tests included (as a
             * child of its own gets its budget above what the zygote holds at its fork);
             * the child is retired above before what it keeps reaches half a budget */
            if (write_number(cg.limit, (unsigned long long)cg_base + cg.budget) != 0 ||
                pwrite(cg.peak, "0", 1, 0) != 1) {
                raise_step("memory cgroup limit");
                break;
            }
            oom_before = oom_kills(cg.events);
        } else if (cg.usage >= 0 && (cg_base = read_number(cg.usage)) >= 0) {
            /* Page cache left by earlier tests (files they read) would be freed by the
             * kernel at the limit and so become extra room: reclaim it first, by a
             * limit just under what the cgroup holds (best effort: it may refuse). */
            /* (memory.stat costs ~7 us to read: at the program's first test, then only
             * once the cgroup has grown past the least it held since by more than the
             * cache it may keep) */
            long long cache = cg_floor < 0 || cg_base > cg_floor + (long long)RECLAIM_ABOVE
                                  ? file_cache(cg.stat)
                                  : 0;
            if (cache > (long long)RECLAIM_ABOVE && cg_base > cache) {
                (void)write_number(cg.limit, (unsigned long long)(cg_base - cache) + (1ULL << 20));
                long long now = read_number(cg.usage);
                if (now >= 0)
                    cg_base = now;
            }
            if (cg_floor < 0 || cg_base < cg_floor)
                cg_floor = cg_base;
            if (write_number(cg.limit, (unsigned long long)cg_base + cg.budget) != 0 ||
                pwrite(cg.peak, "0", 1, 0) != 1) {
                raise_step("memory cgroup limit");
                break;
            }
            oom_before = oom_kills(cg.events);
        }

        struct result_block r = {0};
        int64_t clock_us = -1;
        r.flags |= tightened;
        r.alone_us = lone_limit_us;
        int status = 0, reaped = 0, done = 0, unkept = 0;
        int64_t base_us = 0; /* the child's CPU time when this test was handed to it */
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        int64_t t0 = now_us();
        pid_t pid;
        int pidfd;
        if (rs.pid > 0) {
            pid = rs.pid;
            pidfd = rs.pidfd;
            base_us = rs.base_us;
            r.flags |= FLAG_SHARED;
            /* it has stayed stopped since its last test ended: "g", then continue it. A
             * go pipe that takes no byte (gone between tests, or filled by the program
             * through /proc/self/fd/4: the zygote's end never blocks) ends the child: the
             * test is reported as its end, and the pool runs it again alone */
            if (write(rs.go, "g", 1) != 1)
                (void)kill(pid, SIGKILL);
            (void)kill(pid, SIGCONT);
        } else {
            int go[2] = {-1, -1}, dn[2] = {-1, -1};
            c.ctl[0] = c.ctl[1] = -1;
            if (!alone) {
                if (pipe2(go, O_CLOEXEC) != 0 || pipe2(dn, O_CLOEXEC | O_NONBLOCK) != 0 ||
                    (rs.go = high_fd(go[1])) < 0 || fcntl(rs.go, F_SETFL, O_NONBLOCK) != 0 ||
                    (rs.done = high_fd(dn[0])) < 0 ||
                    (c.ctl[0] = high_fd(go[0])) < 0 || (c.ctl[1] = high_fd(dn[1])) < 0) {
                    raise_step("resident pipes");
                    break;
                }
            }
            PyOS_BeforeFork();
            pid = fork();
            if (pid == 0) {
                PyOS_AfterFork_Child();
                const char *step = do_confine(&c);
                if (step != NULL) {
                    int n = snprintf(fault, sizeof fault, "E%s: %s", step, strerror(errno));
                    if (n > 0 && write(c.handshake, fault, (size_t)n) < 0)
                        _exit(EXIT_FAULT);
                    _exit(EXIT_FAULT);
                }
                ret = PyLong_FromLong(alone ? 1 : 2);
                in_child = 1;
                break;
            }
            PyOS_AfterFork_Parent();
            if (c.ctl[0] >= 0) {
                close(c.ctl[0]);
                close(c.ctl[1]);
                c.ctl[0] = c.ctl[1] = -1;
            }
            if (pid < 0) {
                raise_step("fork");
                break;
            }
            pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
            if (!alone) {
                rs.pid = pid;
                rs.pidfd = pidfd;
                rs.base_us = 0;
                /* (unconfined, there is no RLIMIT_CPU to keep clear of) */
                rs.backstop_us = c.full ? (int64_t)c.lim[0] * 1000000 : INT64_MAX / 4;
                rs.cg_base = cg_base;
            }
        }
        if (pidfd >= 0) {
            /* Sleep until the child ends, or until it could have used its CPU limit
             * (its CPU time never runs ahead of the wall clock by more than its
             * threads allow: the clock is read again then), or until the wall limit. */
            /* the child's process CPU clock (the kernel's CPUCLOCK_SCHED of the pid:
             * glibc's clock_getcpuclockid would first call clock_getres, which the
             * zygote's filter refuses) */
            clockid_t cpu_clock = (clockid_t)((~(unsigned)pid) << 3) | 2;
            int have_clock = 1, exact = 1;
            /* the last exact reading and when it was taken; idle_at: the reading at which
             * the child was found waiting (its clock grew by less than a tenth of the wall
             * time between two readings), -1 while it computes. Each reading wakes a
             * waiting child (~1.5 us of its CPU): read every 250 us, a child asleep just
             * under its limit was pushed past it by the readings alone. A waiting child's
             * sampled clock is exact (it is switched out), so it is read that way until
             * it has run again (its sampled clock moved). */
            int64_t prev_x = -1, prev_at = 0, idle_at = -1;
            int exit_grace = 0;
            /* Interrupt: a resident child at its CPU limit is stopped (the exact reading
             * below), sent SIG_INTERRUPT and continued; the harness raises it in the
             * program's code, and a program in Python bytecode unwinds, its report says
             * so, and it says "done" within ~0.1 ms. The test is a CPU timeout from that
             * moment, as the kill would have made it, and the child is kept for the next
             * test: no kill, exit and fork per looping test (the loop rule's tight tests).
             * Past INTERRUPT_GRACE_* without "done" (a loop inside C code, the signal
             * ignored or blocked, a program that catches it and runs on) it is killed, and
             * the job's later tests are killed at their limits. held: the reading just
             * taken left the child stopped by the zygote */
            int interrupted = 0, held = 0;
            struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN},
                                  {.fd = rs.pid == pid ? rs.done : -1, .events = POLLIN}};
            int64_t wall_end = t0 + wall_limit_ms * 1000;
            for (;;) {
                int64_t now = now_us();
                int64_t wait_us = wall_end - now;
                int64_t least_us = 250; /* (a starved child is not stopped every few us) */
                held = 0;
                if (have_clock) {
                    int64_t used = read_us(cpu_clock);
                    if (used < 0) {
                        have_clock = 0; /* the wall limit and RLIMIT_CPU still hold */
                    } else {
                        used -= base_us; /* (this test's CPU: from its handover) */
                        /* within a tick of the limit (10 ms: HZ=100 at worst) once the
                         * child has had the wall time to reach it: read it exactly */
                        if (used < cpu_limit_us && exact && used + 10000 >= cpu_limit_us &&
                            now - t0 >= cpu_limit_us && (idle_at < 0 || used > idle_at + 100)) {
                            int self_stopped = 0;
                            int64_t x = exact_cpu_us(pid, cpu_clock, &status, &ru, &self_stopped);
                            if (x == -2) {
                                reaped = 1;
                                break;
                            }
                            if (x >= 0)
                                x -= base_us;
                            if (self_stopped)
                                exact = 0; /* stopped by itself: stays so, clock stands */
                            if (x < 0) {
                                exact = 0; /* the sampled clock from here */
                            } else {
                                if (x < cpu_limit_us && !self_stopped) {
                                    kill(pid, SIGCONT);
                                    int64_t at = now_us();
                                    idle_at = prev_x >= 0 && (x - prev_x) * 10 < at - prev_at ? x : -1;
                                    prev_x = x;
                                    prev_at = at;
                                    /* computing, and this close: the next reading when its
                                     * limit is due, not 250 us on (a looping test's overshoot) */
                                    if (idle_at < 0)
                                        least_us = 30;
                                }
                                held = x >= cpu_limit_us && !self_stopped;
                                used = x;
                            }
                        }
                        if (used >= cpu_limit_us && !exit_grace && !interrupted) {
                            /* its report is written (the harness writes it last, then exits):
                             * what runs now is the kernel tearing the child's memory down
                             * (~0.5 ms), not the test, and a test that finished within its
                             * limit is no timeout for its exit. Once, 5 ms at most: a program
                             * can write the channel itself, and buys no more than that */
                            struct stat report;
                            if (fstat(c.fds[3], &report) == 0 && report.st_size > 0) {
                                exit_grace = 1;
                                cpu_limit_us = used + 5000;
                            }
                        }
                        int interruptible = !interrupted && !no_interrupt && pid == rs.pid && exact;
                        if (used >= cpu_limit_us && interruptible && !held) {
                            /* past the limit by the sampled clock (it moves by whole ticks):
                             * stopped first, the signal must find it still */
                            int self_stopped = 0;
                            int64_t x = exact_cpu_us(pid, cpu_clock, &status, &ru, &self_stopped);
                            if (x == -2) {
                                reaped = 1;
                                r.flags |= FLAG_CPU_TIMEOUT;
                                break;
                            }
                            held = x >= 0 && !self_stopped;
                        }
                        if (used >= cpu_limit_us) {
                            r.flags |= FLAG_CPU_TIMEOUT;
                            if (held && interruptible) {
                                interrupted = 1;
                                kill(pid, SIG_INTERRUPT);
                                kill(pid, SIGCONT);
                                cpu_limit_us = used + INTERRUPT_GRACE_CPU_US;
                                if (now + INTERRUPT_GRACE_WALL_US < wall_end)
                                    wall_end = now + INTERRUPT_GRACE_WALL_US;
                                idle_at = prev_x = -1;
                                continue;
                            }
                            if (interrupted)
                                no_interrupt = 1;
                            kill(pid, SIGKILL);
                            break;
                        }
                        if (cpu_limit_us - used < wait_us)
                            wait_us = cpu_limit_us - used;
                        /* waiting, and not run since: its clock will show when it runs (the
                         * zygote wakes every 2 ms for it, not every 250 us) */
                        if (idle_at >= 0 && used <= idle_at + 100)
                            least_us = 2000;
                    }
                }
                if (wall_end - now <= 0) {
                    kill(pid, SIGKILL);
                    if (interrupted) /* its CPU timeout stands: the grace is over */
                        no_interrupt = 1;
                    else
                        r.flags |= FLAG_WALL_TIMEOUT;
                    break;
                }
                if (wait_us < least_us)
                    wait_us = least_us;
                struct timespec tmo = {(time_t)(wait_us / 1000000), (long)(wait_us % 1000000) * 1000};
                int n = ppoll(p, 2, &tmo, NULL);
                if (n > 0 && !p[0].revents && (p[1].revents & POLLIN)) {
                    /* a resident child's test ended. It is stopped, its clock read exactly
                     * (switched out), and it stays stopped until its next test is handed
                     * over: a program that said "done" itself and runs on (threads) can
                     * neither spend CPU nor touch scratch between tests, nor after its
                     * job (the zygote kills it at END) */
                    char sink[64];
                    while (read(rs.done, sink, sizeof sink) > 0)
                        ;
                    int self_stopped = 0;
                    int64_t x = exact_cpu_us(pid, cpu_clock, &status, &ru, &self_stopped);
                    if (x == -2) {
                        reaped = 1;
                        break;
                    }
                    if (x < 0) { /* not stoppable within 5 ms: not kept for another test */
                        x = read_us(cpu_clock);
                        unkept = 1;
                    }
                    done = 1;
                    clock_us = x;
                    break;
                }
                if (n > 0 || (n < 0 && errno != EINTR))
                    break;
            }
            /* the child's CPU time by the scheduler's own clock, read before it is
             * reaped: wait4's rusage has been seen to report up to ~30 % less for a
             * child killed in a busy loop on a loaded host (the clock is what both
             * the kill above and RLIMIT_CPU go by) */
            if (!reaped && !done && have_clock)
                clock_us = read_us(cpu_clock);
            if (!done && pidfd != rs.pidfd)
                close(pidfd);
        }
        if (done) {
            /* the test's CPU: the child's clock now less its clock at the handover */
            r.status = 0;
            r.cpu_us = clock_us >= 0 ? clock_us - base_us : 0;
            rs.base_us = clock_us >= 0 ? clock_us : rs.base_us;
            /* no rusage of a live child (and its /proc is not the zygote's to read): its
             * memory is the cgroup's peak, or, without a cgroup, what it holds in files */
            r.maxrss_kb = base_kb;
        } else {
            if (!reaped)
                while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
                    ;
            r.status = status;
            r.cpu_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
                       (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
            if (clock_us > r.cpu_us)
                r.cpu_us = clock_us;
            r.cpu_us -= base_us;
            r.maxrss_kb = ru.ru_maxrss;
            if (rs.pid == pid) { /* the resident child ended with this test: reaped */
                rs.pid = -1;
                (void)retire(&rs, NULL, NULL);
            }
            if (shared && !(r.flags & FLAG_CPU_TIMEOUT)) {
                /* A test after another in the child that ended it (an exception, an exit, a
                 * signal, a kill at its wall limit or by the OOM killer) is run again at once,
                 * in its place, as a new child's first test: that run is its result, and it
                 * alone feeds the loop rule. This attempt is discarded whole. A kill at its CPU
                 * limit stands, as a child of its own would have had it (its limit is the
                 * same, and a loop loops either way): run again, a looping test would cost
                 * its limit twice. */
                close_test_files(c.fds);
                if (empty_tree(scratch_fd) != 0 || reset_scratch_root(scratch_fd) != 0) {
                    raise_step("empty scratch");
                    break;
                }
                goto redo;
            }
        }
        r.wall_us = now_us() - t0;
        r.base_kb = base_kb;
        /* a timeout (exactly what results.py judges TLE: killed at the limit applied,
         * SIGXCPU, or past the test's own limit; a test that ends just past a tighter
         * limit before its kill is not one): the job's next tests here run tighter */
        /* (a test after another in a resident child gets here by ending cleanly, its time a
         * finished test's from its handover, or killed at its CPU limit, which stands; a
         * clean end past its own limit is run again alone by the pool, which decides) */
        int timed_out = (r.flags & (FLAG_CPU_TIMEOUT | FLAG_WALL_TIMEOUT)) ||
                        (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) ||
                        r.cpu_us > (int64_t)th.cpu_ms * 1000;
        if (timed_out && (!(r.flags & FLAG_SHARED) || (r.flags & FLAG_CPU_TIMEOUT)))
            tight = 1;
        else if (!timed_out) {
            int64_t lone = r.cpu_us + ((r.flags & FLAG_SHARED) ? (int64_t)th.floor_us - (int64_t)th.shared_floor_us : 0);
            if (r.cpu_us > slowest_us)
                slowest_us = r.cpu_us;
            if (lone > slowest_lone_us)
                slowest_lone_us = lone;
        }
        r.cg_peak_kb = -1;
        if (cg_base >= 0) {
            long long peak = read_number(cg.peak);
            r.cg_peak_kb = peak > cg_base ? (peak - cg_base) / 1024 : 0;
            if (oom_kills(cg.events) > oom_before)
                r.flags |= FLAG_OOM;
            /* the child is gone: what the zygote copies of its outputs is not the test's */
            if (write_number(cg.limit, LIMIT_LIFTED) != 0) {
                raise_step("memory cgroup limit");
                break;
            }
        }

        ssize_t hn;
        if (r.flags & FLAG_SHARED) {
            /* its handshake was read at its first test: a child that failed to confine
             * itself never ran one, so never took a second */
            hn = 1;
            fault[0] = 'K';
        } else {
            hn = read(hs_r, fault, sizeof fault);
        }
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
        struct statfs sv;
        ssize_t n_out = 0, n_err = 0, n_chan = 0;
        r.held_kb = 0;
        /* only a scratch tmpfs of its own is the test's (unconfined, scratch is a
         * host directory on a shared file system) */
        if (fstatfs(scratch_fd, &sv) == 0 && sv.f_type == TMPFS_MAGIC)
            r.held_kb += (int64_t)((sv.f_blocks - sv.f_bfree) * (uint64_t)sv.f_bsize / 1024);
        if (fstat(c.fds[1], &fs) == 0) {
            r.held_kb += fs.st_blocks / 2;
            n_out = slurp(c.fds[1], &out, 0, (size_t)fs.st_size < out_cap ? (size_t)fs.st_size : out_cap);
        }
        if (fstat(c.fds[2], &fs) == 0) {
            r.held_kb += fs.st_blocks / 2;
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
        /* the chunk's last test (no frame waiting): its resident child is ended before its
         * result goes out, so nothing of the program runs once the pool has its results */
        int kept_on = done;
        if (done) {
            struct pollfd q = {.fd = fin, .events = POLLIN};
            if (poll(&q, 1, 0) == 0) {
                if (retire(&rs, &c, &cg) != 0) {
                    raise_step("memory cgroup limit");
                    break;
                }
                kept_on = 0;
            }
        }
        struct frame_header oh = {.op = OP_RESULT,
                                  .len = (uint32_t)(sizeof r + (size_t)n_out + (size_t)n_err +
                                                    (size_t)n_chan + fault_len)};
        struct iovec iov[6] = {
            {&oh, sizeof oh},       {&r, sizeof r},        {out.data, (size_t)n_out},
            {err.data, (size_t)n_err}, {chan.data, (size_t)n_chan}, {(void *)fault_text, fault_len},
        };
        int wrote = write_full(fout, iov, 6);
        if (kept_on) {
            /* the resident child waits for its next test: its files emptied and rewound
             * (they are the same open files as its fds 0-3, offsets included) */
            int kept = !unkept;
            for (int k = 0; k < 4 && kept; k++)
                if (ftruncate(c.fds[k], 0) != 0 || lseek(c.fds[k], 0, SEEK_SET) < 0)
                    kept = 0;
            /* files the program made unresettable (a seal, a lease...): its next test gets
             * a new child */
            if (!kept && retire(&rs, &c, NULL) != 0)
                wrote = -1;
        } else if (!done) {
            close_test_files(c.fds);
        }
        /* The next child is forked from this process: nothing of this test may be
         * left in its memory (the input was wiped before the fork, or here). */
        memset(in.data, 0, h.len);
        if (n_out > 0)
            memset(out.data, 0, (size_t)n_out);
        if (n_err > 0)
            memset(err.data, 0, (size_t)n_err);
        if (n_chan > 0)
            memset(chan.data, 0, (size_t)n_chan);
        if (wrote != 0) {
            raise_step("write result");
            break;
        }
        if (empty_tree(scratch_fd) != 0 || reset_scratch_root(scratch_fd) != 0) {
            raise_step("empty scratch");
            break;
        }
    }
    if (!in_child) {
        /* (in the child these numbers may now be its own fds 0-5: dup2 and close_range
         * already left it nothing else) */
        (void)retire(&rs, &c, NULL);
        close_test_files(c.fds);
        close(scratch_fd);
    }
    struct buffer *bufs[4] = {&in, &out, &err, &chan};
    for (int k = 0; k < 4; k++) {
        if (bufs[k]->data) {
            memset(bufs[k]->data, 0, bufs[k]->cap);
            free(bufs[k]->data);
        }
    }
    return ret;
}

static PyMethodDef methods[] = {
    {"probe", pb_probe, METH_NOARGS, probe_doc},
    {"enter_namespaces", pb_enter_namespaces, METH_VARARGS, enter_namespaces_doc},
    {"mount_tmpfs", pb_mount_tmpfs, METH_VARARGS, mount_tmpfs_doc},
    {"bind_mount", pb_bind_mount, METH_VARARGS, bind_mount_doc},
    {"pivot", pb_pivot, METH_VARARGS, pivot_doc},
    {"mount_proc", pb_mount_proc, METH_VARARGS, mount_proc_doc},
    {"unmount", pb_unmount, METH_VARARGS, unmount_doc},
    {"compile_cpu_guard", pb_compile_cpu_guard, METH_VARARGS, compile_cpu_guard_doc},
    {"new_pid_namespace", pb_new_pid_namespace, METH_VARARGS, new_pid_namespace_doc},
    {"landlock_ruleset", pb_landlock_ruleset, METH_VARARGS, landlock_ruleset_doc},
    {"worker_filter", pb_worker_filter, METH_VARARGS, worker_filter_doc},
    {"set_pdeathsig", pb_set_pdeathsig, METH_VARARGS, set_pdeathsig_doc},
    {"confine_zygote", pb_confine_zygote, METH_VARARGS, confine_zygote_doc},
    {"timekeeper", pb_timekeeper, METH_NOARGS, timekeeper_doc},
    {"kept", pb_kept, METH_VARARGS, kept_doc},
    {"empty_dir", pb_empty_dir, METH_VARARGS, empty_dir_doc},
    {"make_readonly", pb_make_readonly, METH_VARARGS, make_readonly_doc},
    {"set_subreaper", pb_set_subreaper, METH_NOARGS, set_subreaper_doc},
    {"serve", pb_serve, METH_VARARGS, serve_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "native",
    "Native confinement for pairbench_async's sandbox, and its wire protocol "
    "(see sandbox/confine.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_native(void)
{
    static const struct {
        const char *name;
        long value;
    } ints[] = {
        {"OP_LOAD", OP_LOAD}, {"OP_TEST", OP_TEST}, {"OP_END", OP_END}, {"OP_QUIT", OP_QUIT},
        {"OP_READY", OP_READY}, {"OP_LOADED", OP_LOADED}, {"OP_RESULT", OP_RESULT},
        {"OP_ZDIED", OP_ZDIED}, {"OP_FATAL", OP_FATAL},
        {"FLAG_WALL_TIMEOUT", FLAG_WALL_TIMEOUT}, {"FLAG_CONFINED", FLAG_CONFINED},
        {"FLAG_OOM", FLAG_OOM}, {"FLAG_CPU_TIMEOUT", FLAG_CPU_TIMEOUT}, {"FLAG_TIGHT", FLAG_TIGHT},
        {"HEAD_START_TIGHT", HEAD_START_TIGHT}, {"EXIT_FAULT", EXIT_FAULT},
        {"FLAG_SHARED", FLAG_SHARED}, {"HEAD_ISOLATED", HEAD_ISOLATED},
        {"EXIT_COMPILE_CPU", EXIT_COMPILE_CPU},
        {"SIG_INTERRUPT", 0}, /* set below: SIGRTMIN is the C library's, read at run time */
        {"RESULT_SIZE", (long)sizeof(struct result_block)},
        {"TEST_HEAD_SIZE", (long)sizeof(struct test_head)},
    };
    static const struct {
        const char *name;
        const char *value;
    } formats[] = {
        {"FRAME_HEADER_FORMAT", FRAME_HEADER_FORMAT}, {"TEST_HEAD_FORMAT", TEST_HEAD_FORMAT},
        {"RESULT_FORMAT", RESULT_FORMAT}, {"ZDIED_FORMAT", ZDIED_FORMAT},
    };
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        long value = strcmp(ints[i].name, "SIG_INTERRUPT") == 0 ? (long)SIG_INTERRUPT : ints[i].value;
        if (PyModule_AddIntConstant(m, ints[i].name, value) != 0)
            goto fail;
    }
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        if (PyModule_AddStringConstant(m, formats[i].name, formats[i].value) != 0)
            goto fail;
    }
    /* what the zygote writes to lift its memory cgroup's limit (v1 and v2 alike) */
    if (PyModule_AddObject(m, "LIMIT_LIFTED", PyLong_FromUnsignedLongLong(LIMIT_LIFTED)) != 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
