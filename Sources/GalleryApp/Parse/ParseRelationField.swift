/// A Relation field of a custom class: the server-named join table holding its pairs
/// (`owning_id`, `related_id`; Parse Server's `_Join:<field>:<class>`) and the class it relates to.
public struct ParseRelationField: Equatable, Sendable {
    /// `custom_<n>_r<k>`: named by the server, never by a client.
    public let joinTable: String
    /// The class of the related objects.
    public let targetClass: String

    /// A relation stored in `joinTable`, to objects of `targetClass`.
    public init(joinTable: String, targetClass: String) {
        self.joinTable = joinTable
        self.targetClass = targetClass
    }
}
