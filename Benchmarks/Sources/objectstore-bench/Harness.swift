import Foundation

/// Timing: a warm-up, then several runs; medians and spreads.
struct Sample {
    var workload: String
    var size: Int
    var system: String
    var seconds: [Double]

    var median: Double {
        let sorted = seconds.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    var spread: (Double, Double) { (seconds.min() ?? .nan, seconds.max() ?? .nan) }
}

struct Options {
    var sizes = [10_000, 100_000]
    var runs = 5
    var json = false
    var only: Set<String> = []
    var editSizes: [Int]?

    init(_ arguments: [String]) {
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            func next() -> String { i += 1; return i < arguments.count ? arguments[i] : "" }
            switch a {
            case "--sizes": sizes = next().split(separator: ",").compactMap { Int($0) }
            case "--runs": runs = max(1, Int(next()) ?? 5)
            case "--json": json = true
            case "--only": only = Set(next().split(separator: ",").map(String.init))
            case "--edit-sizes": editSizes = next().split(separator: ",").compactMap { Int($0) }
            default: break
            }
            i += 1
        }
    }

    func wants(_ workload: String) -> Bool { only.isEmpty || only.contains(workload) }
}

func monotonicSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// Runs `body` once to warm up and `runs` times measured; `setup` runs before each, untimed.
func measure<T>(_ runs: Int, setup: () throws -> T, _ body: (T) throws -> Void) rethrows -> [Double] {
    try body(try setup())
    var times: [Double] = []
    for _ in 0..<runs {
        let input = try setup()
        let start = monotonicSeconds()
        try body(input)
        times.append(monotonicSeconds() - start)
    }
    return times
}

/// Peak resident memory of this process, in bytes (VmHWM).
func peakResidentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kb * 1024
    }
    return 0
}

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("objectstore-bench-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func format(_ seconds: Double) -> String {
    if seconds.isNaN { return "-" }
    if seconds < 1e-3 { return String(format: "%.1f µs", seconds * 1e6) }
    if seconds < 1 { return String(format: "%.2f ms", seconds * 1e3) }
    return String(format: "%.3f s", seconds)
}
