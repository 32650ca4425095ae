/*
 * sandbox/allowlist.h -- the seccomp policy of the program zygote (Z) and test child (C).
 *
 * Included by confine.c right after its seccomp helpers (emit, emit_arch_check, the
 * BPF macros, struct filter, MAX_FILTER); see its "Theory of operation" for the
 * process tree. Three filters stack on a test child, and the kernel applies the
 * strictest answer of all of them (KILL > ERRNO > ALLOW):
 *
 *   1. the worker's deny list (confine.c, build_worker_filter), attached once by W;
 *   2. the zygote's ALLOWLIST below (build_zygote_filter), attached once per program
 *      by Z at the end of confine_zygote, before it reads a byte of the program:
 *      every system call not listed gets EPERM; a listed one may have its arguments
 *      checked (fcntl, ioctl, prctl, clone, kill, prlimit64, socketpair, sendto,
 *      seccomp);
 *   3. the child's small per-test filter (build_child_filter), attached by C in
 *      do_confine: it takes from the allowlist what only the zygote needs.
 *
 * Why an allowlist: every round of attacks on the deny lists found the next system
 * call nobody had listed (fcntl(F_SETOWN)+F_SETSIG+O_ASYNC and ioctl(FIOASYNC/
 * FIOSETOWN) to make the kernel signal the zygote, io_setup to exhaust the host's
 * fs.aio-max-nr, F_NOTIFY to watch host directories, userfaultfd, process_vm_readv,
 * add_key...). Here a call is refused unless someone was seen needing it.
 *
 * Where the list comes from: bench/trace_syscalls.py runs the real pool under
 * `strace -f` on the bundled fixtures (reference and buggy programs), HumanEval's 164
 * tasks, FeedbackEval's erroneous programs and tests/sandbox/allowlist_workloads.py
 * (threads, numpy, deep recursion, big allocations, zoneinfo, scratch files,
 * select/poll/epoll, asyncio, sqlite3, signals to itself, ctypes...), and prints every
 * call the zygote makes once confined and every call of the test children, with the
 * commands of fcntl/ioctl/prctl and the flags of clone. Each entry below says who
 * was seen needing it. Added without being traced, each saying so: the generic
 * (*at) form of a traced x86_64 call, which glibc uses on aarch64 and Python uses
 * with dir_fd (mkdirat, unlinkat, renameat, readlinkat, faccessat, dup3, ppoll,
 * epoll_pwait, getpgid); what the zygote's own code does on paths no workload took
 * (kill on a wall-clock timeout, fchmod/fchmodat on a directory the program made
 * unreadable); restart_syscall.
 *
 * Decisions:
 *   - Default EPERM. ENOSYS only for clone3, whose flags live in memory BPF cannot
 *     read: glibc (2.34+) tries clone3 for every thread and falls back to clone on
 *     ENOSYS only. Nothing else traced needs a fallback errno: glibc 2.36 on x86_64
 *     uses newfstatat, not statx; rseq is allowed (glibc registers it per thread);
 *     faccessat2 (which glibc's faccessat tries first, falling back on ENOSYS only)
 *     is allowed. KILL_PROCESS only for a foreign architecture (emit_arch_check: an
 *     i386 int 0x80 call would be read with x86_64 numbers); x32 calls get EPERM.
 *   - Refused ioctls get ENOTTY, not EPERM: it is what the kernel says of a file
 *     that is no terminal (isatty() is false, as it would be on the child's memfds),
 *     and CPython's set_inheritable falls back to fcntl on ENOTTY, never on EPERM.
 *   - mmap and mprotect are not filtered by protection: ctypes' libffi maps its
 *     closure trampolines writable and executable (traced: mmap RWX after
 *     statfs("/selinux")), and machine code a program writes gains nothing: every
 *     system call it makes passes these same filters, and the i386 and x32 entry
 *     points are refused above.
 *   - Arguments are compared on their low 32 bits where the kernel reads an int or
 *     unsigned int (fcntl and ioctl commands, prctl options, clone flags of the legacy
 *     clone, pids, socket families); where it reads an unsigned long (prctl's second
 *     argument), a value with high bits set is one the kernel rejects itself.
 *   - PR_SET_PDEATHSIG only to SIGKILL: a child may set again what do_confine set,
 *     never clear it. Lifetimes will rest on a PID namespace too, but this one stays.
 *   - kill only a single process (pid > 0): never kill(0) (its process group) or
 *     kill(-1) (everything its uid may signal), even from the zygote's pre-imports.
 *   - prlimit64 only on itself (pid 0, as glibc's getrlimit/setrlimit pass):
 *     resource.prlimit(os.getpid(), ...) is refused, resource.prlimit(0, ...) works.
 *   - Not allowed although a program might use them, because nothing traced did:
 *     symlink/link (in the scratch directory), flock, F_OFD_* and POSIX locks (see
 *     fcntl_cmds),
 *     getegid/getgroups, fallocate, recvmsg/sendmsg, eventfd, timerfd, inotify.
 *
 * Layout: the listed numbers are sorted and searched with a binary tree of JGE
 * jumps (O(log n): 4 comparisons to reach a leaf of at most PB_LEAF JEQs, at most 18
 * instructions to an answer with the architecture check), each leaf followed by its
 * own RET EPERM / RET ALLOW and the argument checks of its entries, so that every
 * jump is short. A call allowed whatever its arguments ends in a constant ALLOW that
 * depends only on the number: the kernel's seccomp action cache then skips the filter
 * for it altogether. The zygote filter (~235 instructions on x86_64) is built and
 * attached once per program: confine_zygote takes ~60 us longer (measured). The
 * child's, per test, is 14 instructions: ~14 us to attach, where the 44 of the deny
 * list it replaces took ~28 us. A call whose arguments are checked costs ~15-25 ns
 * more than before (three filters run instead of two); the others hit the cache.
 */

#include <sys/ioctl.h>

#ifndef __NR_faccessat2
#define __NR_faccessat2 439 /* the same on every architecture since 5.8 */
#endif

static int attach_filter(struct filter *f); /* confine.c */

/* What the filter does with a listed system call. */
enum pb_rule {
    PB_ALLOW,      /* whatever the arguments */
    PB_ENOSYS,     /* "not implemented": libc falls back to an older call */
    PB_CLONE,      /* a thread, or a plain fork; never a namespace */
    PB_KILL,       /* one process, never a group or everyone */
    PB_SENDTO,     /* on a connected socket only: no destination address */
    PB_FCNTL,      /* the commands in fcntl_cmds */
    PB_IOCTL,      /* the requests in ioctl_cmds, ENOTTY otherwise */
    PB_PRCTL,      /* the options in prctl_opts */
    PB_PRLIMIT,    /* its own limits only */
    PB_SOCKETPAIR, /* AF_UNIX only */
    PB_SECCOMP,    /* attach a filter, no flags */
};

struct pb_syscall {
    int nr;
    enum pb_rule rule;
};

#define PB_A(name) {__NR_##name, PB_ALLOW}
#define PB_R(name, rule) {__NR_##name, (rule)}

/* The zygote's allowlist, inherited by its test children. Z: the zygote once
 * confined (compile, pre-import, serve's loop); C: the test child, first in
 * do_confine, then the program (CPython and what it imports). */
static const struct pb_syscall zygote_allowed[] = {
    /* descriptors: stdio, the report channel, files, pipes */
    PB_A(read),              /* C: stdin, files, imports; Z: frames from the pool */
    PB_A(write),             /* C: stdout, stderr, report (fd 3), handshake */
    PB_A(readv),             /* Z: read_exact (os.readv) of the program */
    PB_A(writev),            /* Z: frames to the pool (send, write_full) */
    PB_A(pread64),           /* Z: /proc/self/statm, a test's outputs; C: sqlite3 */
    PB_A(pwrite64),          /* Z: a test's input into its memfd; C: sqlite3 */
    PB_A(lseek),             /* C, Z: io.open's tell(), file seeks */
    PB_A(close),             /* everyone */
    PB_A(close_range),       /* C: do_confine closes everything above fd 3 */
#ifdef __NR_dup2
    PB_A(dup2),              /* C: do_confine puts stdio and the report on 0-3 */
#endif
    PB_A(dup3),              /* untraced: glibc's dup2 on aarch64; os.dup2(inheritable=False) */
    PB_A(pipe2),             /* Z: the handshake pipe; C: os.pipe */
    PB_R(fcntl, PB_FCNTL),   /* see fcntl_cmds */
    PB_R(ioctl, PB_IOCTL),   /* see ioctl_cmds */
    /* the file system (Landlock decides where) */
    PB_A(openat),            /* C, Z: imports, open(), os.listdir; Z: empty_tree */
    PB_A(newfstatat),        /* C, Z: os.stat, imports; glibc's fstat */
    PB_A(fstat),             /* C, Z: numpy's import (OpenBLAS) */
    PB_A(statfs),            /* C: ctypes' libffi looks for /selinux */
    PB_A(getdents64),        /* C: os.listdir, os.scandir; Z: empty_tree */
    PB_A(getcwd),            /* C: os.getcwd */
    PB_A(chdir),             /* C: do_confine enters the scratch directory; os.chdir */
    PB_A(fchdir),            /* C: os.fchdir */
#ifdef __NR_access
    PB_A(access),            /* C: os.access */
#endif
    PB_A(faccessat),         /* untraced: glibc's access on aarch64 */
    PB_A(faccessat2),        /* untraced: os.access(dir_fd=...); glibc tries it first */
#ifdef __NR_readlink
    PB_A(readlink),          /* C: sysconfig (zoneinfo's import) resolves sys.executable */
#endif
    PB_A(readlinkat),        /* untraced: glibc's readlink on aarch64 */
#ifdef __NR_mkdir
    PB_A(mkdir),             /* C: os.mkdir, tempfile.mkdtemp */
#endif
    PB_A(mkdirat),           /* untraced: glibc's mkdir on aarch64 */
#ifdef __NR_rmdir
    PB_A(rmdir),             /* C: os.rmdir */
#endif
#ifdef __NR_unlink
    PB_A(unlink),            /* C: os.remove, tempfile */
#endif
    PB_A(unlinkat),          /* Z: empty_tree; C: shutil.rmtree */
#ifdef __NR_rename
    PB_A(rename),            /* C: os.rename, os.replace */
#endif
#ifdef __NR_renameat
    PB_A(renameat),          /* untraced: glibc's rename on aarch64 */
#endif
    PB_A(renameat2),         /* untraced: the same, newer glibc */
    PB_A(truncate),          /* C: os.truncate */
    PB_A(ftruncate),         /* C: file.truncate() */
    PB_A(utimensat),         /* C: os.utime (the scratch directory's own times) */
    PB_A(fsync),             /* C: os.fsync */
    PB_A(fdatasync),         /* C: sqlite3's commit */
    PB_A(sendfile),          /* C: shutil.copyfile */
    PB_A(umask),             /* C: os.umask */
    PB_A(fchmod),            /* Z: empty_tree, a directory the program made unreadable */
    PB_A(fchmodat),          /* Z: empty_tree, the same one level down */
    /* memory */
    PB_A(brk),               /* C, Z: malloc */
    PB_A(mmap),              /* C, Z: malloc, thread stacks, extension modules, mmap */
    PB_A(munmap),            /* C, Z: free */
    PB_A(mremap),            /* C: realloc of big lists and strings */
    PB_A(mprotect),          /* C, Z: the dynamic loader, thread stack guards */
    PB_A(madvise),           /* C: a thread's stack on exit, numpy's MADV_HUGEPAGE */
    PB_A(msync),             /* C: mmap.flush */
    PB_A(mbind),             /* C, Z: numpy's OpenBLAS places its buffer */
    /* threads */
    PB_R(clone, PB_CLONE),   /* C: threads; Z: one fork per test */
    PB_R(clone3, PB_ENOSYS), /* C: glibc tries it first for every thread */
    PB_A(futex),             /* C: locks, joins, queues; Z: the fork's atfork locks */
    PB_A(set_robust_list),   /* C: glibc, after the fork and in every thread */
#ifdef __NR_rseq
    PB_A(rseq),              /* C: glibc registers every new thread */
#endif
    PB_A(gettid),            /* C: glibc after the fork, threading */
    PB_A(sched_getaffinity), /* C: os.sched_getaffinity; numpy's OpenBLAS counts CPUs */
    PB_A(exit),              /* C: a thread ends */
    PB_A(exit_group),        /* C, Z: os._exit */
    /* signals, to itself (the child filter checks kill and tgkill) */
    PB_A(rt_sigaction),      /* C: signal.signal, threading */
    PB_A(rt_sigprocmask),    /* C: thread start, signal.pthread_sigmask */
    PB_A(rt_sigreturn),      /* C: the end of every signal handler */
    PB_A(sigaltstack),       /* C: faulthandler.enable */
    PB_A(restart_syscall),   /* untraced: a call interrupted by a stop resumes */
    PB_R(kill, PB_KILL),     /* C: os.kill(os.getpid()); Z: a test over its wall time */
    PB_A(tgkill),            /* C: raise, signal.raise_signal, pthread_kill */
#ifdef __NR_alarm
    PB_A(alarm),             /* C: signal.alarm */
#endif
    PB_A(setitimer),         /* C: signal.setitimer; glibc's alarm on aarch64 */
    PB_A(getitimer),         /* C: signal.getitimer */
    /* time */
    PB_A(clock_gettime),     /* C: time.process_time (no vDSO for CPU clocks) */
    PB_A(clock_nanosleep),   /* C: time.sleep */
    /* waiting on descriptors */
#ifdef __NR_poll
    PB_A(poll),              /* Z: a test child's pidfd; C: select.poll */
#endif
    PB_A(ppoll),             /* untraced: glibc's poll on aarch64 */
    PB_A(pselect6),          /* C: select.select */
    PB_A(epoll_create1),     /* C: select.epoll, selectors, asyncio */
    PB_A(epoll_ctl),         /* C: the same */
#ifdef __NR_epoll_wait
    PB_A(epoll_wait),        /* C: the same */
#endif
    PB_A(epoll_pwait),       /* untraced: glibc's epoll_wait on aarch64 */
    /* unnamed sockets (asyncio's self-pipe, socket.socketpair) */
    PB_R(socketpair, PB_SOCKETPAIR), /* C: asyncio, socket.socketpair */
    PB_R(sendto, PB_SENDTO),  /* C: socket.send */
    PB_A(recvfrom),          /* C: socket.recv */
    PB_A(getsockname),       /* C: asyncio's transports */
    PB_A(getpeername),       /* C: the same */
    PB_A(shutdown),          /* C: socket.shutdown */
    /* the process itself */
    PB_A(getpid),            /* C, Z: os.getpid, PyOS_AfterFork, the child filter's pid */
    PB_A(getppid),           /* C: do_confine's check that Z is alive; os.getppid */
    PB_A(getuid),            /* C: os.getuid */
    PB_A(geteuid),           /* C: os.geteuid, tempfile */
    PB_A(getgid),            /* C: os.getgid */
    PB_A(getegid),           /* untraced: os.getegid (a read of its own identity) */
    PB_A(getgroups),         /* untraced: os.getgroups (the same) */
    PB_A(getresuid),         /* untraced: os.getresuid (the same) */
    PB_A(getresgid),         /* untraced: os.getresgid (the same) */
    PB_A(sched_yield),       /* untraced: os.sched_yield, spin-waits (yields its own CPU) */
#ifdef __NR_getpgrp
    PB_A(getpgrp),           /* C: os.getpgrp */
#endif
    PB_A(getpgid),           /* untraced: glibc's getpgrp on aarch64 */
    PB_A(getsid),            /* C: os.getsid */
    PB_A(uname),             /* C: platform, os.uname; Z, C: numpy's import */
    PB_A(times),             /* C: os.times */
    PB_A(getrusage),         /* Z: the compile's CPU budget; C: resource.getrusage */
    PB_A(getrandom),         /* C: os.urandom, random's seeding after the fork */
    PB_R(prlimit64, PB_PRLIMIT), /* Z: compile budgets; C: do_confine's rlimits */
    PB_R(prctl, PB_PRCTL),   /* see prctl_opts */
    PB_A(capset),            /* C: do_confine drops capabilities (none are left to gain) */
    PB_R(seccomp, PB_SECCOMP), /* C: do_confine attaches the child filter */
    /* the zygote's loop (the child filter refuses these to the program) */
    PB_A(memfd_create),      /* Z: each test's stdin, stdout, stderr and report */
    PB_A(pidfd_open),        /* Z: waits for a test child with a timeout */
    PB_A(wait4),             /* Z: reaps a test child and reads its rusage */
};

/* One allowed value of the argument a check selects on, optionally with a
 * condition on another argument. */
struct pb_value {
    uint32_t value;
    int cond_arg;      /* -1: no condition */
    int cond_none_of;  /* 1: no bit of cond may be set; 0: must equal cond */
    uint32_t cond;
};

#define PB_V(v) {(v), -1, 0, 0}
#define PB_V_EQ(v, arg, c) {(v), (arg), 0, (c)}
#define PB_V_NONE_OF(v, arg, c) {(v), (arg), 1, (c)}

/* fcntl(fd, cmd, arg): refused are F_SETOWN(_EX) and F_SETSIG (the kernel would signal
 * a process of our choosing), F_SETLEASE, F_NOTIFY (watch a host directory),
 * F_SETPIPE_SZ (kernel memory outside RLIMIT_AS), O_ASYNC through F_SETFL. */
static const struct pb_value fcntl_cmds[] = {
    PB_V(F_DUPFD),          /* untraced: fcntl.fcntl(fd, F_DUPFD) */
    PB_V(F_GETFD),          /* untraced: os.get_inheritable, set_inheritable's fallback */
    PB_V(F_SETFD),          /* Z: fdopendir in empty_tree; C: the same in os.listdir */
    PB_V(F_GETFL),          /* Z, C: fdopendir */
    PB_V_NONE_OF(F_SETFL, 2, O_ASYNC), /* untraced: O_NONBLOCK, O_APPEND; never O_ASYNC */
    /* Not F_GETLK, F_SETLK, F_SETLKW (sqlite3 on a file, fcntl.lockf): a lock lives on
     * the inode, and the read-only files of the minimal root (the standard library,
     * /dev/null, /dev/urandom) are the host's own inodes, so a lock on one is seen by
     * every other sandbox and by the host: a channel between programs. sqlite3 in
     * memory takes no lock. */
    PB_V(F_DUPFD_CLOEXEC),  /* Z: _high_fd, empty_tree; C: os.dup */
    PB_V(F_ADD_SEALS),      /* Z: seals a test's stdin */
};

/* ioctl(fd, request, arg): nothing else reaches a driver (no TIOCSTI, FIOASYNC,
 * FIOSETOWN, SIOCSPGRP...); TCGETS (isatty) gets the ENOTTY a memfd would give. */
static const struct pb_value ioctl_cmds[] = {
    PB_V(FIONBIO),   /* Z, C: os.set_blocking (CPython's _Py_set_blocking) */
    PB_V(FIOCLEX),   /* C: os.set_inheritable(fd, False) */
    PB_V(FIONCLEX),  /* untraced: os.set_inheritable(fd, True), FIOCLEX's pair */
};

/* prctl(option, arg2, ...): only what do_confine does, and only in that direction. */
static const struct pb_value prctl_opts[] = {
    PB_V_EQ(PR_SET_PDEATHSIG, 1, SIGKILL),  /* C: do_confine; never cleared */
    PB_V_EQ(PR_SET_DUMPABLE, 1, 0),         /* C: do_confine; never set back */
    PB_V(PR_GET_DUMPABLE),                  /* untraced: a read, harmless */
    PB_V(PR_SET_NO_NEW_PRIVS),              /* C: do_confine (a one-way switch) */
    PB_V_EQ(PR_CAP_AMBIENT, 1, PR_CAP_AMBIENT_CLEAR_ALL), /* C: drop_capabilities */
};

static const struct pb_value prlimit_pids[] = {
    PB_V(0), /* Z, C: glibc's getrlimit/setrlimit (resource.*rlimit) */
};

static const struct pb_value socket_families[] = {
    PB_V(AF_UNIX), /* C: asyncio's self-pipe, socket.socketpair() */
};

static const struct pb_value seccomp_ops[] = {
    PB_V_EQ(SECCOMP_SET_MODE_FILTER, 1, 0), /* C: the child filter, no flags */
};

#define PB_N(a) (sizeof(a) / sizeof((a)[0]))
#define PB_LEAF 8

/* Point the jump at `at` (true branch) to the instruction index `to`; -1 if too far
 * for the 8-bit offset. Writes only inside the filter (a dry run writes nothing). */
static int pb_set_jt(struct filter *f, unsigned at, unsigned to)
{
    if (to <= at || to - at - 1 > 255)
        return -1;
    if (at < MAX_FILTER)
        f->ins[at].jt = (unsigned char)(to - at - 1);
    return 0;
}

/* LOAD arg `sel`; allow the listed values (those with a condition only when it
 * holds); anything else gets `deny`. */
static int emit_values(struct filter *f, int sel, const struct pb_value *v, size_t n,
                       uint32_t deny)
{
    unsigned at[16], allow;
    size_t i;
    if (n > PB_N(at))
        return -1;
    emit(f, LOAD(ARG_LO(sel)));
    for (i = 0; i < n; i++) {
        at[i] = f->len;
        emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, v[i].value, 0, 0));
    }
    emit(f, STMT(BPF_RET | BPF_K, deny));
    allow = f->len;
    emit(f, RET_ALLOW);
    for (i = 0; i < n; i++) {
        if (v[i].cond_arg < 0) {
            if (pb_set_jt(f, at[i], allow) != 0)
                return -1;
            continue;
        }
        if (pb_set_jt(f, at[i], f->len) != 0)
            return -1;
        emit(f, LOAD(ARG_LO(v[i].cond_arg)));
        if (v[i].cond_none_of)
            emit(f, JUMP(BPF_JMP | BPF_JSET | BPF_K, v[i].cond, 0, 1));
        else
            emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, v[i].cond, 1, 0));
        emit(f, STMT(BPF_RET | BPF_K, deny));
        emit(f, RET_ALLOW);
    }
    return 0;
}

#define PB_DENY(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

/* A fork may carry only these besides its exit signal, SIGCHLD (glibc's fork passes
 * CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD). */
#define PB_FORK_FLAGS (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_PARENT_SETTID)

/* The block of a listed call's rule; every path ends in a RET. */
static int emit_rule(struct filter *f, enum pb_rule rule)
{
    switch (rule) {
    case PB_ALLOW:
        emit(f, RET_ALLOW);
        return 0;
    case PB_ENOSYS:
        emit(f, RET_ERRNO(ENOSYS));
        return 0;
    case PB_CLONE:
        /* a thread: no namespace flag; otherwise a plain fork, nothing shared */
        emit(f, LOAD(ARG_LO(0)));
        emit(f, JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
        emit(f, JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NS_FLAGS, 2, 3));
        emit(f, STMT(BPF_ALU | BPF_AND | BPF_K, ~(uint32_t)PB_FORK_FLAGS));
        emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIGCHLD, 1, 0));
        emit(f, RET_ERRNO(EPERM));
        emit(f, RET_ALLOW);
        return 0;
    case PB_KILL:
        /* pid_t: 1..INT_MAX, one process; not 0 (its group) or negative (a group, all) */
        emit(f, LOAD(ARG_LO(0)));
        emit(f, JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x80000000U, 2, 0));
        emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
        emit(f, RET_ALLOW);
        emit(f, RET_ERRNO(EPERM));
        return 0;
    case PB_SENDTO:
        /* a destination address would reach a named socket (confine.c) */
        emit_arg_zero(f, 4);
        return 0;
    case PB_FCNTL:
        return emit_values(f, 1, fcntl_cmds, PB_N(fcntl_cmds), PB_DENY(EPERM));
    case PB_IOCTL:
        return emit_values(f, 1, ioctl_cmds, PB_N(ioctl_cmds), PB_DENY(ENOTTY));
    case PB_PRCTL:
        return emit_values(f, 0, prctl_opts, PB_N(prctl_opts), PB_DENY(EPERM));
    case PB_PRLIMIT:
        return emit_values(f, 0, prlimit_pids, PB_N(prlimit_pids), PB_DENY(EPERM));
    case PB_SOCKETPAIR:
        return emit_values(f, 0, socket_families, PB_N(socket_families), PB_DENY(EAFNOSUPPORT));
    case PB_SECCOMP:
        return emit_values(f, 0, seccomp_ops, PB_N(seccomp_ops), PB_DENY(EPERM));
    }
    return -1;
}

/* A leaf: one JEQ per entry, RET EPERM for none of them, a shared RET ALLOW, then
 * the blocks of the entries with a rule. */
static int emit_leaf(struct filter *f, const struct pb_syscall *e, size_t n)
{
    unsigned at[PB_LEAF], allow;
    size_t i;
    for (i = 0; i < n; i++) {
        at[i] = f->len;
        emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)e[i].nr, 0, 0));
    }
    emit(f, RET_ERRNO(EPERM));
    allow = f->len;
    emit(f, RET_ALLOW);
    for (i = 0; i < n; i++) {
        unsigned to = allow;
        if (e[i].rule != PB_ALLOW) {
            to = f->len;
            if (emit_rule(f, e[i].rule) != 0)
                return -1;
        }
        if (pb_set_jt(f, at[i], to) != 0)
            return -1;
    }
    return 0;
}

/* Binary search over e[0..n) (sorted by number): if nr >= the middle one, the right
 * half, else the left half, which follows. `probe` measures the left half first
 * (emitted where nothing is written) so that the jump over it is known. */
static int emit_search(struct filter *f, struct filter *probe, const struct pb_syscall *e,
                       size_t n)
{
    if (n <= PB_LEAF)
        return emit_leaf(f, e, n);
    size_t mid = n / 2;
    unsigned short saved = probe->len;
    probe->len = MAX_FILTER;
    if (emit_search(probe, probe, e, mid) != 0)
        return -1;
    unsigned left = (unsigned)probe->len - MAX_FILTER;
    probe->len = saved;
    if (left <= 255) {
        emit(f, JUMP(BPF_JMP | BPF_JGE | BPF_K, (unsigned)e[mid].nr, (unsigned char)left, 0));
    } else { /* too far for a conditional jump: through an unconditional one */
        emit(f, JUMP(BPF_JMP | BPF_JGE | BPF_K, (unsigned)e[mid].nr, 0, 1));
        emit(f, STMT(BPF_JMP | BPF_JA, left));
    }
    if (emit_search(f, probe, e, mid) != 0)
        return -1;
    return emit_search(f, probe, e + mid, n - mid);
}

/* The zygote's allowlist; 0, or -1 when the table cannot be laid out (too long, or
 * a number listed twice). */
static int build_zygote_filter(struct filter *f)
{
    struct pb_syscall sorted[PB_N(zygote_allowed)];
    struct filter probe;
    size_t i, j, n = PB_N(zygote_allowed);
    for (i = 0; i < n; i++) { /* insertion sort: the numbers differ per architecture */
        struct pb_syscall s = zygote_allowed[i];
        for (j = i; j > 0 && sorted[j - 1].nr > s.nr; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = s;
    }
    for (i = 1; i < n; i++)
        if (sorted[i].nr == sorted[i - 1].nr)
            return -1;
    f->len = 0;
    probe.len = MAX_FILTER;
    emit_arch_check(f);
    if (emit_search(f, &probe, sorted, n) != 0)
        return -1;
    return f->len <= MAX_FILTER ? 0 : -1;
}

/* Build and attach the zygote's allowlist (after no_new_privs); -1 with errno set. */
static int attach_zygote_filter(void)
{
    struct filter f;
    if (build_zygote_filter(&f) != 0) {
        errno = E2BIG;
        return -1;
    }
    return attach_filter(&f);
}

/* What the zygote's allowlist lets through and only the test child is refused:
 * memory files (RLIMIT_AS does not count them), changing file modes, waiting on
 * other processes through pidfds. Everything else the child must not do (execve,
 * fork, vfork, tkill, rt_(tg)sigqueueinfo, pidfd_send_signal, memfd_secret, chmod,
 * fchmodat2, ptrace...) is refused by not being on the allowlist at all. */
static const int child_denied[] = {
    __NR_memfd_create, __NR_fchmod, __NR_fchmodat, __NR_pidfd_open,
};

/* The test child's filter, attached per test on top of the zygote's allowlist, so
 * short (attaching costs ~1.5 us per instruction; 14 here): clone only for threads,
 * kill and tgkill only to itself, none of child_denied. No architecture check: the
 * allowlist beneath kills a foreign architecture and refuses x32 (the strictest
 * answer wins), and this filter is never attached without it.
 *
 *    0  LOAD nr
 *    1  JEQ clone        -> 8
 *    2  JEQ kill         -> 10
 *    3  JEQ tgkill       -> 10
 *    4+ JEQ child_denied -> deny;  the last one's false branch -> allow
 *    8  LOAD arg0 (clone flags)   JSET CLONE_THREAD -> allow : deny
 *   10  LOAD arg0 (pid, a pid_t)  JEQ pid -> allow : deny
 *   12  allow: RET ALLOW
 *   13  deny:  RET ERRNO(EPERM)
 */
static int build_child_filter(struct filter *f, uint32_t pid)
{
    const unsigned nd = PB_N(child_denied);
    const unsigned clone_at = 4 + nd, self_at = clone_at + 2, allow = self_at + 2;
    const unsigned deny = allow + 1;
    unsigned i;
    f->len = 0;
    emit(f, LOAD(SYSCALL_NR));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, (unsigned char)(clone_at - 2), 0));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_kill, (unsigned char)(self_at - 3), 0));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, (unsigned char)(self_at - 4), 0));
    for (i = 0; i < nd; i++) {
        unsigned at = 4 + i;
        unsigned char jf = (unsigned char)(i + 1 == nd ? allow - at - 1 : 0);
        emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)child_denied[i],
                     (unsigned char)(deny - at - 1), jf));
    }
    emit(f, LOAD(ARG_LO(0)));
    emit(f, JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 2, 3));
    emit(f, LOAD(ARG_LO(0)));
    emit(f, JUMP(BPF_JMP | BPF_JEQ | BPF_K, pid, 0, 1));
    emit(f, RET_ALLOW);
    emit(f, RET_ERRNO(EPERM));
    return f->len == deny + 1 && f->len <= MAX_FILTER ? 0 : -1;
}
