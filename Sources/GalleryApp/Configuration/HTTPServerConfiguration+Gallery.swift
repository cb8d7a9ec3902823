import HTTPServer

extension HTTPServerConfiguration {
    /// The HTTP server's settings from galleryd's configuration: address, connections and threads,
    /// the I/O backend, request limits, timeouts and rates, the drain on shutdown, the access log,
    /// and the security headers every answer carries.
    /// - Parameters:
    ///   - listenFileDescriptor: a socket systemd passed in (socket activation), else nil.
    ///   - temporaryDirectory: where large request bodies are spooled (the blob store's spool).
    init(_ configuration: GalleryConfiguration, listenFileDescriptor: Int32?, temporaryDirectory: String) {
        self.init()
        host = configuration.host
        port = configuration.port
        maxConnections = configuration.maxConnections
        handlerThreads = configuration.effectiveHandlerThreads
        eventLoopThreads = configuration.eventLoops
        ioBackend = HTTPIOBackend(rawValue: configuration.ioBackend) ?? .platformDefault
        self.listenFileDescriptor = listenFileDescriptor
        self.temporaryDirectory = temporaryDirectory
        limits.requestLineBytes = configuration.maxRequestLineBytes
        limits.headerBytes = configuration.maxHeaderBytes
        limits.headerCount = configuration.maxHeaderCount
        limits.maxBodyBytes = configuration.maxBodyBytes
        timeouts.headerRead = Double(configuration.headerTimeoutMs) / 1000
        timeouts.idleKeepAlive = Double(configuration.idleTimeoutMs) / 1000
        timeouts.bodyRead = Double(configuration.bodyTimeoutMs) / 1000
        timeouts.minimumBodyRate = Double(configuration.minBodyRate)
        timeouts.minimumResponseRate = Double(configuration.minResponseRate)
        timeouts.minimumRateGrace = Double(configuration.rateGraceMs) / 1000
        drainTimeout = Double(configuration.drainTimeoutMs) / 1000
        defaultHeaders = SecurityHeaders.defaults
        accessLog.format = HTTPAccessLogFormat(rawValue: configuration.accessLog) ?? .text
        accessLog.bufferBytes = configuration.accessLogBuffer
    }
}
