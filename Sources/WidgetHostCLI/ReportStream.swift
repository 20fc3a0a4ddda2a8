#if canImport(Glibc)
    import Glibc
#endif

/// A report written as it is made: text goes to a stdio stream (stdout, or an
/// anonymous temporary file that is copied out later) in stdio's buffer, so
/// a report of any length costs a bounded amount of memory.
final class ReportStream {
    /// Why a report could not be written.
    struct WriteError: Error, CustomStringConvertible {
        var description: String
    }

    private let file: UnsafeMutablePointer<FILE>
    /// Set by the first failed write (a full disk, a closed pipe).
    private(set) var failed = false

    private init(file: UnsafeMutablePointer<FILE>) {
        self.file = file
    }

    deinit {
        fclose(file)
    }

    /// The process's standard output (a stream of its own on a copy of the
    /// descriptor, after whatever `print` buffered).
    static func standardOutput() throws(WriteError) -> ReportStream {
        fflush(nil)
        let descriptor = dup(STDOUT_FILENO)
        guard descriptor >= 0, let file = fdopen(descriptor, "w") else {
            if descriptor >= 0 { close(descriptor) }
            throw WriteError(description: "could not write to the standard output: errno \(errno)")
        }
        return ReportStream(file: file)
    }

    /// An anonymous temporary file (deleted when closed), for a part of a
    /// report that is written before its place in the document comes.
    static func spool() throws(WriteError) -> ReportStream {
        guard let file = tmpfile() else {
            throw WriteError(description: "could not create a temporary file for the report: errno \(errno)")
        }
        return ReportStream(file: file)
    }

    /// Writes `text` as it is (no newline added).
    func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard bytes.count > 0 else { return }
            if fwrite(bytes.baseAddress, 1, bytes.count, file) != bytes.count { failed = true }
        }
    }

    /// Writes `text` and a newline.
    func line(_ text: String) {
        write(text)
        write("\n")
    }

    /// Appends everything written to `spool` so far, and empties nothing:
    /// the spool is read from its start.
    func append(contentsOf spool: ReportStream) {
        fflush(spool.file)
        rewind(spool.file)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let read = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, spool.file) }
            if read == 0 { break }
            let written = buffer.withUnsafeBytes { fwrite($0.baseAddress, 1, read, file) }
            if written != read { failed = true }
        }
        if ferror(spool.file) != 0 { failed = true }
    }

    /// Flushes stdio's buffer; throws if any write failed.
    func finish() throws(WriteError) {
        if fflush(file) != 0 { failed = true }
        if failed { throw WriteError(description: "could not write the report: errno \(errno)") }
    }
}
