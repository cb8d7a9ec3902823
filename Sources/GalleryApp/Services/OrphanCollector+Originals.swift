import BlobStore
import Foundation

extension OrphanCollector {
    /// Removes the originals older than `graceHours` hours that no `files` row names: an upload
    /// stores its blob inside the transaction that inserts its row, so a process killed after the
    /// blob was written and before the commit leaves the blob and no row (bench/faults.sh's kill
    /// rounds leave one or two in 20; decision 027, session 21). Nothing would ever remove it, and
    /// a 12 MP PNG's is tens of megabytes. Returns how many were removed.
    ///
    /// Each is removed under a placeholder `files` row of its name: an upload of the same bytes
    /// inserting its row meanwhile makes the placeholder's insert wait for it and then find its
    /// row (the blob is kept); one that comes after waits for the placeholder, finds no row and no
    /// blob, and writes the bytes again. A photo naming the original also keeps it.
    func collectUnrecordedOriginals(graceHours: Int) throws -> Int {
        let cutoff = Date().addingTimeInterval(-Double(graceHours) * 3600)
        let names = try listing("originals").compactMap { name, modified -> String? in
            guard modified < cutoff, let dot = name.firstIndex(of: "."),
                name.distance(from: name.startIndex, to: dot) == 64
            else { return nil }
            return name
        }
        var removed = 0
        for start in stride(from: 0, to: names.count, by: Self.batchSize) {
            let batch = Array(names[start..<min(start + Self.batchSize, names.count)])
            let recorded = Set(
                try trash.pool.query("select name from files where name = any($1)", [batch]).map {
                    try $0.decode(String.self, "name")
                })
            for name in batch where !recorded.contains(name) {
                if try removeUnrecordedOriginal(name) { removed += 1 }
            }
        }
        return removed
    }

    /// Deletes `originals/<name>` if, under its placeholder row, no `files` row and no photo names it.
    private func removeUnrecordedOriginal(_ name: String) throws -> Bool {
        let key = try BlobKey("originals/" + name)
        let checksum = String(name.prefix(64))
        return try trash.pool.transaction { connection -> Bool in
            let placed =
                try connection.query(
                    "insert into files (name, key, checksum) values ($1, $2, $3) on conflict do nothing returning name",
                    [name, key.rawValue, checksum]
                ).count == 1
            guard placed else { return false }
            defer { _ = try? connection.query("delete from files where name = $1", [name]) }
            if try PhotoRepository(pool: trash.pool).exists(checksum: checksum, on: connection) { return false }
            return try store.delete(key)
        }
    }
}
