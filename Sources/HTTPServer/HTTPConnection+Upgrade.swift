import Foundation
import Logging

/// The WebSocket hand-off (RFC 6455 §4.2.2): a handshake on a route that accepts one is answered
/// with 101 and the socket passes to a `WebSocketConnection` on the same loop, whose deadline the
/// connection then follows.
extension HTTPConnection {
    /// Answers a WebSocket handshake and hands the socket over, or refuses a bad one.
    func upgrade(_ request: HTTPRequest, route: HTTPRoute, hasBody: Bool) -> Action {
        guard let accept = route.webSocket else { return machine.resume() }
        guard request.method == .get, !hasBody, let key = WebSocketHandshake.key(request.headers) else {
            // §4.2.2: a bad handshake gets a 400 and, for a wrong version, the one we speak.
            server.logger.notice("bad websocket handshake", metadata: ["request": "\(request.requestID)"])
            respondServerError(
                .badRequest, "bad websocket handshake", headers: ["Sec-WebSocket-Version": "13"], hasUnreadBody: hasBody
            )
            return machine.resume()
        }
        let handler: WebSocketHandler
        do {
            handler = try accept(request)
        } catch {
            parser.discardEmptyBody()
            var response = currentResponder().response(for: error, request: request)
            HTTPResponseEncoder.applyContentCoding(&response, requestHeaders: request.headers)
            startResponse(response)
            return machine.resume()
        }
        server.logger.info("websocket opened \(request.path)", metadata: ["request": "\(request.requestID)"])
        let connection = WebSocketConnection(
            fd: fd, loop: loop, limits: route.webSocketLimits, handler: handler, logger: server.logger,
            remoteAddress: remoteAddress, initial: WebSocketHandshake.switchingProtocols(key: key),
            leftover: buffer.readable)
        buffer.consume(buffer.readableCount)
        self.request = nil
        self.route = nil
        let action = machine.upgraded()
        webSocket = connection
        connection.progressed = { [unowned(unsafe) self] in
            self.run(self.webSocketProgressed())
            self.loop.updateInterest(self)
        }
        connection.start()
        return action
    }

    /// After the WebSocket ran: its deadline becomes the connection's, or the socket closes.
    func webSocketProgressed() -> Action {
        guard let webSocket else { return .wait }
        return machine.webSocketProgressed(finished: webSocket.isFinished, deadline: webSocket.deadline)
    }
}
