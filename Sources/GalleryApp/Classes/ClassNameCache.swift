/// Values read from the database by class name (a built-in class's app fields or permissions),
/// kept in memory. A number that moves with every change keeps a read that began before a change
/// from storing what it read. Finds on every thread of the handler pool look up here, so lookups
/// take a read lock (`ReadMostlyLock`) and each value is held in a box: a lookup is one
/// dictionary probe and one retain, however large the value.
final class ClassNameCache<Value: Sendable>: Sendable {
    /// One value, shared by every reader.
    final class Held: Sendable {
        let value: Value

        init(_ value: Value) {
            self.value = value
        }
    }

    private let state = ReadMostlyLock<(generation: UInt64, known: [String: Held])>((0, [:]))

    /// The value held for `name`, or the one `read` makes (kept unless a change came meanwhile).
    func held(_ name: String, read: () throws -> Value) rethrows -> Held {
        let (held, generation) = state.read { ($0.known[name], $0.generation) }
        if let held { return held }
        let made = Held(try read())
        state.write { if $0.generation == generation { $0.known[name] = made } }
        return made
    }

    /// Forgets the value held for `name` (every value when nil); reads begun before are not kept.
    func forget(_ name: String? = nil) {
        state.write {
            $0.generation &+= 1
            if let name { $0.known[name] = nil } else { $0.known = [:] }
        }
    }
}
