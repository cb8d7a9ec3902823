/// A metric family computed at scrape time (`PrometheusRegistry.addCollector`), for values owned
/// elsewhere: the database pool's occupancy, the queue's depth.
public struct PrometheusScrapedFamily: Sendable {
    /// One value of the family, with its labels in exposition form (`state="failed"`, or empty).
    public struct Sample: Sendable {
        public var labels: String
        public var value: Double

        /// A sample with these labels (none by default).
        public init(labels: String = "", _ value: Double) {
            self.labels = labels
            self.value = value
        }
    }

    /// The metric name (`galleryd_db_pool_size`).
    public var name: String
    /// The `# HELP` text.
    public var help: String
    /// The `# TYPE`: `gauge` or `counter`.
    public var type: String
    public var samples: [Sample]

    /// A family with its samples.
    public init(_ name: String, help: String, type: String, samples: [Sample]) {
        self.name = name
        self.help = help
        self.type = type
        self.samples = samples
    }

    /// A family of one unlabelled sample.
    public init(_ name: String, help: String, type: String, value: Double) {
        self.init(name, help: help, type: type, samples: [Sample(value)])
    }
}
