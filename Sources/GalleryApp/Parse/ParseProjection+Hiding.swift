extension ParseProjection {
    /// The same projection without the fields named in `hidden` (a class's `protectedFields` for
    /// one caller): neither selected nor written. objectId, createdAt and updatedAt always stay.
    func hiding(_ hidden: Set<String>) -> ParseProjection {
        let always: Set<String> = ["objectId", "createdAt", "updatedAt"]
        let kept = fields.filter { always.contains($0.name) || !hidden.contains($0.name) }
        return ParseProjection(
            schema: schema, fields: kept, includes: includes.filter { !hidden.contains($0.key) },
            includesScore: includesScore, columnPrefix: columnPrefix,
            relations: relations.filter { !hidden.contains($0) })
    }
}
