extension ParseClassSchema {
    /// This built-in schema with an app's own fields after its fixed ones (`BuiltInAppFields`):
    /// each read from its `app_<n>` column and typed as a custom class's field of its type is,
    /// so the compiler and the encoder treat it as they treat a custom class's field. With no
    /// app fields, this very schema.
    func adding(_ appFields: [CustomClass.Field]) -> ParseClassSchema {
        guard !appFields.isEmpty else { return self }
        var all = fields
        for field in appFields {
            guard let column = field.column, let type = field.type.readType else { continue }
            let plain: Bool
            switch type {
            case .acl, .json: plain = false
            default: plain = true
            }
            all.append(
                ParseField(field.name, column, type, queryable: plain || type == .json("Array"), sortable: plain))
        }
        return ParseClassSchema(
            className: className, table: table, fields: all, hasTrash: hasTrash, liveCountName: liveCountName,
            userCountName: userCountName, publicLiveCountName: publicLiveCountName,
            hiddenWithTrashedTargets: hiddenWithTrashedTargets, searchColumn: searchColumn, searchFields: searchFields,
            isCustom: isCustom, relations: relations)
    }
}
