import Foundation

extension WorkerPool {
    /// The orphan collector's pass, among the periodic duties of worker 0: counted in
    /// `galleryd_orphans_removed_total`, logged and survived when it fails.
    @discardableResult
    func collectOrphans() -> OrphanCollector.Collected {
        do {
            let collected = try OrphanCollector(trash: trash).collect(graceHours: settings.orphanGraceHours)
            if collected.uploads > 0 { metrics?.orphansRemoved.increment(Double(collected.uploads), "upload") }
            if collected.derivatives > 0 {
                metrics?.orphansRemoved.increment(Double(collected.derivatives), "derivative")
            }
            if collected.multipartUploads > 0 {
                metrics?.orphansRemoved.increment(Double(collected.multipartUploads), "multipart")
            }
            return collected
        } catch {
            logger.error("orphan collection failed: \(error)")
            return OrphanCollector.Collected()
        }
    }
}
