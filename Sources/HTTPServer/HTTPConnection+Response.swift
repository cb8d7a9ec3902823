import Foundation
import Logging

/// Writing a response: its head and body handed to `HTTPResponseWriter`, flushes reported to the
/// state machine, and the exchange recorded (metrics, access log, temporary files) once it is out
/// or aborted.
extension HTTPConnection {
    /// Starts writing `response` to the current request. Taken, not copied: a copy of a response
    /// is a reference count on each of its parts, and one more release of each (decision 041).
    func startResponse(_ response: consuming HTTPResponse) {
        guard let request else { return }
        startResponse(response, for: request)
    }

    /// `startResponse` with the current request handed in by a caller that holds it already (the
    /// handler's dispatch): not copied again from `self.request` (a retain and a release; decision
    /// 041, round 9).
    func startResponse(_ response: consuming HTTPResponse, for request: HTTPRequest) {
        guard machine.isOpen else { return }
        writer.begin()
        let sendsBody = request.method != .head && !HTTPResponseEncoder.hasNoContent(response.status.code)
        if let unopened = writer.takeFile(of: response.body, sendsBody: sendsBody) {
            server.logger.error("cannot open response file \(unopened)", metadata: ["request": "\(request.requestID)"])
            response = currentResponder().response(
                status: .internalServerError, message: "internal server error", request: request)
            switch response.body {
            case .file, .descriptor: response.body = .empty
            default: break
            }
        }
        switch response.body {
        case .bytes(let bytes) where sendsBody:
            writer.setBody(bytes)
        case .stream(let stream, let length):
            if sendsBody && length > 0 {
                writer.setStream(stream, length: length)
                // Runs on the producer's thread when a `.pending` read has something new; strong on
                // purpose: the cycle ends when the exchange cancels the stream (which drops the waker).
                let loop = self.loop
                stream.setWaker { [self] in loop.execute { self.streamReady(stream) } }
            } else {
                stream.cancel()
            }
        default:
            break
        }
        // The machine learns whether the handler's `Connection` asks to close as the head is written.
        writer.encodeHead(
            response, with: &loop.encoder, requestID: request.requestID, clientVersion: request.version
        ) { closeRequested in
            machine.responseStarted(closeRequested: closeRequested, draining: loop.draining, now: loop.now)
        }
        responseStatus = response.status.code
    }

    /// A handler that ran on the pool answered.
    func handlerFinished(_ response: HTTPResponse, request: HTTPRequest) {
        guard machine.state == .handling else {
            // Closed while the handler ran (shutdown timeout): only the temporary body is left to clean,
            // and a streamed body's producer to stop.
            if case .file(let path, _) = request.body { unlink(path) }
            if case .stream(let stream, _) = response.body { stream.cancel() }
            return
        }
        startResponse(response)
        drive()
        loop.updateInterest(self)
    }

    /// Writes what is pending of the response.
    func flush() -> Action {
        let (outcome, written) = writer.flush(to: fd)
        let result: HTTPConnectionStateMachine.FlushResult
        switch outcome {
        case .done:
            result = .done
        case .blocked:
            result = .blocked
        case .waitingForStream:
            result = .waitingForStream
        case .fileEndedEarly:
            server.logger.error(
                "response file shorter than its Content-Length", metadata: ["request": "\(request?.requestID ?? "")"])
            result = .failed
        case .failed:
            result = .failed
        case .streamFailed(let message):
            server.logger.error("\(message)", metadata: ["request": "\(request?.requestID ?? "")"])
            result = .failed
        }
        return machine.flushed(written: written, result: result, now: loop.now)
    }

    /// The stream has bytes (or an end) after a `.pending` read: carry on writing.
    func streamReady(_ ready: HTTPBodyStream) {
        guard machine.state == .writing, writer.stream === ready else { return }
        drive()
        loop.updateInterest(self)
    }

    /// The client stopped reading the response (or reads below the minimum rate).
    func resetStalledWrite(belowMinimumRate: Bool) {
        let what = belowMinimumRate ? "client reading below the minimum rate" : "client stopped reading"
        server.logger.notice("response write timed out (\(what))", metadata: ["peer": "\(remoteAddress)"])
        // Reset rather than close: a plain close would leave the unsent response queued in the
        // kernel for the same slow client, holding the memory this timeout is meant to free.
        var reset = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
        abortExchange()
    }

    /// The response cannot be finished: logged as aborted, and the socket closed.
    func abortExchange() {
        recordExchange(completed: false)
        close()
    }

    /// The response is out: the exchange is recorded, then the next request, a linger or a close.
    func finishExchange() -> Action {
        recordExchange(completed: true)
        let action = machine.exchangeFinished(buffered: buffer.readableCount, draining: loop.draining, now: loop.now)
        if case .parse = action { buffer.shrinkIfEmpty(above: 64 * 1024) }
        return action
    }

    /// After the response: metrics, access log, temporary file cleanup.
    private func recordExchange(completed: Bool) {
        writer.finish()
        let responseBytes = writer.bytesWritten
        // Only when there is one: storing nil over nil is a release call too.
        if let sink {
            sink.discard()
            self.sink = nil
        }
        // The request taken out once (moved, where a copy to read it and another to keep it each cost
        // a retain and a release; decision 041, round 9), recorded, then kept for the next head.
        if var finished = request {
            request = nil
            let elapsed = monotonicNanoseconds() - requestStart
            // The fields lent in place rather than copied out of the request's box (round 10).
            finished.withExchangeFields { method, routePattern, path, requestID in
                loop.recorder?.requestFinished(
                    method: method, routePattern: routePattern, status: responseStatus,
                    nanoseconds: Int(truncatingIfNeeded: elapsed), bytesSent: responseBytes)
                if let accessLog {
                    accessLog.record(
                        remote: remoteAddress, method: method.rawValue, path: path, status: responseStatus,
                        bytes: responseBytes, nanoseconds: elapsed, requestID: requestID, aborted: !completed)
                }
            }
            if case .file(let path, _) = finished.body { unlink(path) }
            if finished.emptyForRefill() { finishedRequest = consume finished }
        }
        route = nil
        responders.reset()
    }
}
