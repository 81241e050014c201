import Foundation
#if canImport(Glibc)
import Glibc
#endif

// A full disk or a file-size limit makes writes fail with an error (reported, exit 2)
// instead of killing the process.
signal(SIGXFSZ, SIG_IGN)

let exitStatus = TaskCtl.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: TaskCtl.processEnvironment())
exit(exitStatus)
