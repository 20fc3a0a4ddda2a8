import CWidgetHostSupport
import Foundation
import Synchronization

/// Temporary folders a command made for itself, removed if the command is
/// interrupted (SIGINT, SIGTERM, or SIGHUP when its terminal goes away)
/// before it removes them: Ctrl-C on a long `bench` or `simulate` leaves
/// nothing behind in `$TMPDIR`. The signal is then raised again with its
/// default action, so the shell sees the command killed by it (exit status
/// 130, 143 or 129). The plugin runners die with the command
/// (`PR_SET_PDEATHSIG`).
///
/// A command that makes such folders turns it on first; every folder
/// ``DataDirectory/makeTemporary()`` makes is then removed on an interrupt
/// until ``DataDirectory/removeTree(_:)`` removes it:
///
/// ```swift
/// InterruptCleanup.enable()
/// let root = DataDirectory.makeTemporary()   // removed on an interrupt
/// defer { root.map(DataDirectory.removeTree) }
/// ```
///
/// The signals are caught from ``enable()`` on (`wh_interrupt_pipe_open`: a
/// handler that writes the signal's number to a pipe, read by a thread of
/// its own), never one the command was started with ignored (a background
/// job of a shell ignores SIGINT). The commands that handle their signals
/// themselves (`run`, `preview`) never turn it on.
public enum InterruptCleanup {
    private struct State {
        var paths: [String] = []
        var enabled = false
        /// A signal came: no folder is made any more (``make(_:removeOnInterrupt:)``),
        /// and one registered from now on is removed at once.
        var interrupted = false
    }

    private static let state = Mutex(State())

    /// Catches SIGINT, SIGTERM and SIGHUP from now on (once; later calls do nothing).
    /// Never in a process that reads its signals from a signalfd (the
    /// daemon): the thread it starts would take them from it.
    public static func enable() {
        let first = state.withLock { state in
            defer { state.enabled = true }
            return !state.enabled
        }
        if first { startReader() }
    }

    /// Removes `path` (a folder and everything under it) if the command is
    /// interrupted before ``forget(_:)``.
    public static func removeOnInterrupt(_ path: String) {
        let now = state.withLock { state in
            if !state.interrupted { state.paths.append(path) }
            return state.interrupted
        }
        if now { DataDirectory.removeTree(path) }
    }

    /// Runs `make`, which creates a folder and returns its path (nil if it
    /// could not), unless a signal came (then nil, `errno` EINTR); the
    /// cleanup waits while it runs. With `removeOnInterrupt`, the folder is
    /// registered in the same step, so a signal either finds it registered
    /// or stops it from being made. Without this, a folder made while the
    /// cleanup was removing (a temporary root, or a plugin's data folder
    /// under one, with `mkdir -p` making its parent again) outlived the
    /// command.
    static func make(_ make: () -> String?, removeOnInterrupt: Bool) -> String? {
        state.withLock { state in
            guard !state.interrupted else {
                errno = EINTR
                return nil
            }
            guard let made = make() else { return nil }
            if removeOnInterrupt { state.paths.append(made) }
            return made
        }
    }

    /// Waits for the signal's default action if the command was
    /// interrupted, and returns at once otherwise. A command calls it before
    /// it exits: a command whose folder was refused after the signal (or
    /// that ended meanwhile) would otherwise exit with its own status, maybe
    /// while the cleanup was still removing, instead of dying by the signal
    /// once the folders are gone.
    public static func holdIfInterrupted() {
        guard state.withLock({ $0.interrupted }) else { return }
        while true { pause() }
    }

    /// The command removed `path` itself (or keeps it).
    public static func forget(_ path: String) {
        state.withLock { $0.paths.removeAll { $0 == path } }
    }

    /// Catches the signals and reads them on a thread of its own, which
    /// removes the folders and raises the signal again.
    private static func startReader() {
        let pipe = wh_interrupt_pipe_open()
        guard pipe >= 0 else { return }  // nothing to clean up with, as before
        let reader = Thread {
            // Delivered to this thread even if every other one blocks them.
            wh_interrupt_unblock()
            var byte: UInt8 = 0
            var got = read(pipe, &byte, 1)
            while got < 0 && errno == EINTR { got = read(pipe, &byte, 1) }
            guard got == 1 else { return }
            let signalNumber = Int32(byte)
            // Every folder registered until now; from now on none is made
            // (make(_:removeOnInterrupt:)), and one registered after is
            // removed by removeOnInterrupt itself.
            let paths = state.withLock { state in
                state.interrupted = true
                return state.paths
            }
            // A runner still writing in its data folder can refill it while
            // it is removed (the runners die with this process, not before).
            for path in paths {
                for attempt in 0..<5 where access(path, F_OK) == 0 {
                    if attempt > 0 { usleep(20_000) }
                    DataDirectory.removeTree(path)
                }
            }
            signal(signalNumber, SIG_DFL)
            raise(signalNumber)
        }
        reader.start()
    }
}
