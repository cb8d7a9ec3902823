extension ParseProjection {
    /// The same projection without the fields named in `hidden` (a class's `protectedFields` for
    /// one caller): neither selected nor written, except that a field named in `revealedBy` is
    /// kept and selected only on the rows whose pointer columns listed for it name the caller
    /// (`userField:` entries). objectId, createdAt and updatedAt always stay.
    func hiding(_ hidden: Set<String>, revealedBy: [String: [String]] = [:]) -> ParseProjection {
        let always: Set<String> = ["objectId", "createdAt", "updatedAt"]
        let kept = fields.filter {
            always.contains($0.name) || !hidden.contains($0.name) || revealedBy[$0.name] != nil
        }
        return ParseProjection(
            schema: schema, fields: kept, includes: includes.filter { !hidden.contains($0.key) },
            includesScore: includesScore, columnPrefix: columnPrefix,
            relations: relations.filter { !hidden.contains($0) },
            revealedBy: revealedBy.filter { hidden.contains($0.key) && !always.contains($0.key) })
    }
}
