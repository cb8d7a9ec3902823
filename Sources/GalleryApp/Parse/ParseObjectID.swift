/// Parse objectIds: 10 characters from [A-Za-z0-9], drawn from the system's CSPRNG
/// (62^10 ≈ 8·10^17 values, so collisions are negligible and the primary key catches the rest).
public enum ParseObjectID {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// The length of generated ids.
    public static let length = 10

    /// A new random objectId.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return generate(using: &generator)
    }

    /// A new objectId drawn from `generator` (tests pass a seeded one).
    public static func generate<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var bytes = [UInt8](repeating: 0, count: length)
        for index in 0..<length {
            // `random(in:)` is unbiased (rejection sampling), unlike `% 62`.
            bytes[index] = alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `text` could be an objectId a client refers to: 1–32 ASCII letters and digits
    /// (ours have 10; imported data may differ in length).
    public static func isPlausible(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 32 else { return false }
        return utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
    }
}
