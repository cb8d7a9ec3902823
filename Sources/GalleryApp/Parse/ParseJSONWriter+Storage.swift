extension ParseJSONWriter {
    /// The writer's bytes: one allocation the writer appends to through its pointer, without the
    /// per-call checks and generic copies of `Array.append(contentsOf:)` (a page of 20 photos makes
    /// about 2,000 small appends). The writer keeps the count; this object owns the memory and is
    /// replaced (copied) when it grows or when a copy of the writer shares it.
    final class Storage {
        /// The first byte; `capacity` bytes are allocated.
        let base: UnsafeMutablePointer<UInt8>
        /// How many bytes `base` holds room for.
        let capacity: Int

        init(capacity: Int) {
            self.capacity = max(capacity, 64)
            base = .allocate(capacity: self.capacity)
        }

        /// A storage of `capacity` bytes holding the first `count` bytes of this one.
        func copy(count: Int, capacity: Int) -> Storage {
            let copy = Storage(capacity: capacity)
            copy.base.update(from: base, count: count)
            return copy
        }

        deinit { base.deallocate() }
    }
}
