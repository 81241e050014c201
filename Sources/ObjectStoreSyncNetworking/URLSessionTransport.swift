import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ObjectStoreSync

/// HTTP through Foundation's URLSession (TLS included), in the calling process. Every answer
/// is bounded, in size (``SyncLimits/answerBytes``: a larger one is refused as soon as its
/// length is known or passed, never buffered whole) and in time (`deadline`, for the whole
/// request: a server that sends a byte now and then cannot hold a sync for ever; and
/// `idleTimeout` between two reads).
package struct URLSessionTransport: HTTPTransport {
    /// The most time one request may take, answer included (300 s unless set).
    package let deadline: TimeInterval
    /// The most time without a byte from the server (60 s unless set).
    package let idleTimeout: TimeInterval
    /// The largest answer taken.
    package let answerLimit: Int
    /// For tests: how long the delegate waits at an answer's first chunk, as it does when its
    /// thread waits for a core on a busy machine (0: not at all).
    package var firstChunkPause: TimeInterval = 0
    /// One session for the transport's requests (a session per request left each one's
    /// connections and dispatch sources behind).
    private let box: SessionBox

    /// A transport that keeps nothing: no cookies, and no response cache (Foundation's
    /// would make a folder in the user's cache directory).
    package init(deadline: TimeInterval = 300, idleTimeout: TimeInterval = 60, answerLimit: Int = SyncLimits.answerBytes) {
        self.deadline = deadline
        self.idleTimeout = idleTimeout
        self.answerLimit = answerLimit
        box = SessionBox(deadline: deadline, idleTimeout: idleTimeout)
    }

    /// Sends the request and waits for its answer on the calling thread: the one place a sync
    /// waits on asynchronous code (URLSession answers on its own queue). The engine, the
    /// servers and taskctl's helper transport are synchronous; ``SyncEngine/sync(progress:)``'s
    /// `async` form runs them on a thread of its own.
    package func send(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let url = URL(string: request.url) else { throw HTTPTransportError(reason: "\(request.url) is not a URL") }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        urlRequest.timeoutInterval = idleTimeout
        let collector = AnswerCollector(limit: answerLimit, deadline: deadline, idleTimeout: idleTimeout, firstChunkPause: firstChunkPause)
        let task = box.session.dataTask(with: urlRequest)
        box.dispatcher.register(collector, for: task.taskIdentifier)
        defer { box.dispatcher.remove(task.taskIdentifier) }
        let (data, response) = try collector.run(task)
        guard let http = response as? HTTPURLResponse else { throw HTTPTransportError(reason: "not an HTTP response") }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data)
    }
}

/// A transport's session and the delegate that hands each task's events to its collector;
/// the session is invalidated (and lets go of its delegate) when the transport goes.
private final class SessionBox: @unchecked Sendable {
    let session: URLSession
    let dispatcher = TaskDispatcher()

    init(deadline: TimeInterval, idleTimeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = idleTimeout
        configuration.timeoutIntervalForResource = deadline
        session = URLSession(configuration: configuration, delegate: dispatcher, delegateQueue: InPlaceDelegateQueue())
    }

    deinit {
        session.finishTasksAndInvalidate()
    }
}

/// The session's delegate queue, which runs each event where URLSession hands it over (with
/// FoundationNetworking on Linux: on the session's transfer thread, for a chunk of an
/// answer) instead of queueing it for a thread of its own. Queued, the chunks of a server
/// that sends as fast as loopback allows piled up faster than the delegate's thread, waiting
/// for a core on a busy machine, could count them against the size bound: taskctl-http was
/// OOM-killed at 24 GB on a busy 2-core machine. Run in place, each chunk is counted before
/// the next one is read, so an answer takes at most the size bound and one chunk, and a slow
/// delegate slows the reading, which TCP passes on to the server. (Making the transfer
/// thread wait for room in a queue instead kept it reading so steadily that the cancel,
/// which must run on that thread, waited for minutes.) The delegate's methods never wait on
/// the session (its cancel goes through another thread), so running them on the transfer
/// thread cannot deadlock.
private final class InPlaceDelegateQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ operation: Operation) {
        operation.start()
    }
}

/// The session's delegate: each task's events go to the collector of its request.
private final class TaskDispatcher: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var collectors: [Int: AnswerCollector] = [:]

    func register(_ collector: AnswerCollector, for task: Int) { lock.withLock { collectors[task] = collector } }
    func remove(_ task: Int) { _ = lock.withLock { collectors.removeValue(forKey: task) } }
    private func collector(_ task: URLSessionTask) -> AnswerCollector? { lock.withLock { collectors[task.taskIdentifier] } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let collector = collector(dataTask) else { return completionHandler(.cancel) }
        collector.received(response, task: dataTask, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        collector(dataTask)?.received(data, task: dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        collector(task)?.completed(error)
    }
}

/// Collects one task's answer, stopping it past the size limit or the deadline, and says
/// which in the error.
private final class AnswerCollector: @unchecked Sendable {
    private let lock = NSLock()
    private let limit: Int
    private let deadline: TimeInterval
    private let idleTimeout: TimeInterval
    private var firstChunkPause: TimeInterval
    private var data = Data()
    private var response: URLResponse?
    /// Why this side stopped the task (the error URLSession then reports is only "cancelled").
    private var stopped: String?
    /// The answer, set once by ``completed(_:)``, which then signals `done`.
    private var result: Result<(Data, URLResponse), any Error>?
    private let done = DispatchSemaphore(value: 0)
    private var finished = false

    init(limit: Int, deadline: TimeInterval, idleTimeout: TimeInterval, firstChunkPause: TimeInterval) {
        self.limit = limit
        self.deadline = deadline
        self.idleTimeout = idleTimeout
        self.firstChunkPause = firstChunkPause
    }

    func run(_ task: URLSessionDataTask) throws -> (Data, URLResponse) {
        task.resume()
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [weak self, weak task] in
            guard let self, let task else { return }
            self.stop(task, "the server did not finish answering within \(Self.seconds(self.deadline)) (the deadline of one request, sync.timeout)")
        }
        done.wait()
        guard let result = lock.withLock({ result }) else { throw HTTPTransportError(reason: "no answer") }
        return try result.get()
    }

    static func seconds(_ interval: TimeInterval) -> String {
        interval == interval.rounded() ? "\(Int(interval)) seconds" : "\(interval) seconds"
    }

    private func stop(_ task: URLSessionTask, _ reason: String) {
        let first = lock.withLock { () -> Bool in
            guard stopped == nil, !finished else { return false }
            stopped = reason
            return true
        }
        // Not on this thread: the delegate runs on the session's transfer thread, where a cancel
        // is carried out (URLSessionTask.cancel waits for that thread on some toolchains).
        if first { DispatchQueue.global().async { task.cancel() } }
    }

    func received(_ response: URLResponse, task dataTask: URLSessionDataTask, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        if response.expectedContentLength > Int64(limit) {
            stop(dataTask, "the server's answer is \(response.expectedContentLength) bytes, more than the \(limit) a sync takes; it was not read")
            completionHandler(.cancel)
            return
        }
        lock.withLock { self.response = response }
        completionHandler(.allow)
    }

    func received(_ data: Data, task dataTask: URLSessionDataTask) {
        let pause = lock.withLock { () -> TimeInterval in
            defer { firstChunkPause = 0 }
            return firstChunkPause
        }
        if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        let size = lock.withLock { () -> Int in
            guard stopped == nil else { return 0 }
            self.data.append(data)
            return self.data.count
        }
        if size > limit {
            stop(dataTask, "the server's answer passed \(limit) bytes, the most a sync takes; the rest was not read")
        }
    }

    func completed(_ error: (any Error)?) {
        let outcome: Result<(Data, URLResponse), any Error>? = lock.withLock {
            guard !finished else { return nil }
            finished = true
            let outcome: Result<(Data, URLResponse), any Error>
            if let stopped {
                outcome = .failure(HTTPTransportError(reason: stopped))
            } else if let error {
                outcome = .failure(HTTPTransportError(reason: Self.describe(error, idleTimeout: idleTimeout)))
            } else if let response {
                outcome = .success((data, response))
            } else {
                outcome = .failure(HTTPTransportError(reason: "no answer"))
            }
            result = outcome
            data = Data()
            return outcome
        }
        if outcome != nil { done.signal() }
    }

    /// URLSession's error as a sentence: its codes for the common cases, which Linux's
    /// Foundation shows only as "error -1001".
    static func describe(_ error: any Error, idleTimeout: TimeInterval) -> String {
        let code = (error as NSError).domain == NSURLErrorDomain ? (error as NSError).code : 0
        switch code {
        case NSURLErrorTimedOut: return "the server did not answer within \(seconds(idleTimeout)) (no byte came for that long)"
        case NSURLErrorCannotConnectToHost: return "the connection was refused"
        case NSURLErrorCannotFindHost: return "the host name is not known"
        case NSURLErrorNetworkConnectionLost: return "the connection was lost"
        case NSURLErrorNotConnectedToInternet: return "there is no network"
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
             NSURLErrorServerCertificateNotYetValid, NSURLErrorServerCertificateHasUnknownRoot:
            return "the secure connection failed (\(error.localizedDescription))"
        default: return error.localizedDescription
        }
    }
}

extension SyncTransport {
    /// Requests sent with Foundation's URLSession (HTTPS included), in this process, with an
    /// ephemeral session: no cookies, no cache.
    public static var urlSession: SyncTransport { SyncTransport(URLSessionTransport()) }
}
