/// `flickr.photos.getInfo` and `flickr.photos.getSizes`.
extension FlickrAPI {
    /// The photo a call names (`photo_id`) when the caller may see it, else code 1.
    func namedPhoto(_ parameters: FlickrParameters, caller: ParseCaller) throws -> FlickrPhoto {
        guard let id = parameters.nonEmpty("photo_id"), ParseObjectID.isPlausible(id),
            let photo = try repository.photo(id, caller: caller)
        else { throw FlickrError.photoNotFound }
        return photo
    }

    /// `flickr.photos.getInfo`: the photo's ids and secrets, owner, title, dates, tags and page URL;
    /// code 2 when a `secret` is given and is not the photo's, as Flickr.
    func photoInfo(_ parameters: FlickrParameters, caller: ParseCaller) throws -> [FlickrValue.Entry] {
        let photo = try namedPhoto(parameters, caller: caller)
        if let secret = parameters.nonEmpty("secret"),
            urls.secrets?.verify(secret, photoId: photo.id, original: false) != true
        {
            throw FlickrError(code: 2, message: "Invalid secret")
        }
        let tags: [FlickrValue] = photo.tags.map { tag in
            .object([
                ("id", .string(photo.id + "-" + tag)), ("author", .string(photo.ownerId)),
                ("authorname", .string(photo.ownerName)),
                ("raw", .string(tag)), ("machine_tag", .int(0)), (FlickrValue.content, .string(tag)),
            ])
        }
        let page = urls.publicURL() + "/"
        let entries: [FlickrValue.Entry] = [
            ("id", .string(photo.id)), ("secret", .string(urls.secret(photo.id))),
            ("server", .string(FlickrAssetURLs.server)),
            ("farm", .int(FlickrAssetURLs.farm)), ("dateuploaded", .string(String(photo.uploaded))),
            ("isfavorite", .int(0)),
            ("license", .string("0")), ("safety_level", .string("0")), ("rotation", .int(0)),
            ("originalsecret", .string(urls.originalSecret(photo.id))), ("originalformat", .string(urls.format(photo))),
            (
                "owner",
                .object([
                    ("nsid", .string(photo.ownerId)), ("username", .string(photo.ownerName)), ("realname", .string("")),
                    ("location", .string("")), ("iconserver", .string("0")), ("iconfarm", .int(0)),
                ])
            ),
            ("title", .text(photo.title)), ("description", .text("")),
            (
                "visibility",
                .object([("ispublic", .int(photo.isPublic ? 1 : 0)), ("isfriend", .int(0)), ("isfamily", .int(0))])
            ),
            (
                "dates",
                .object([
                    ("posted", .string(String(photo.uploaded))),
                    ("taken", .string(photo.taken ?? Self.mysqlDate(photo.uploaded))),
                    ("takengranularity", .int(0)), ("takenunknown", .string(photo.taken == nil ? "1" : "0")),
                    ("lastupdate", .string(String(photo.updated))),
                ])
            ),
            ("views", .string("0")),
            ("tags", .object([("tag", .list(tags))])),
            (
                "urls",
                .object([
                    ("url", .list([.object([("type", .string("photopage")), (FlickrValue.content, .string(page))])]))
                ])
            ),
            ("media", .string("photo")),
        ]
        return [("photo", .object(entries))]
    }

    /// `flickr.photos.getSizes`: every size of the ladder the photo has (all once it is processed;
    /// the original alone before), with Flickr's labels, pixel sizes and URLs.
    func photoSizes(_ parameters: FlickrParameters, caller: ParseCaller) throws -> [FlickrValue.Entry] {
        let photo = try namedPhoto(parameters, caller: caller)
        let page = urls.publicURL() + "/"
        let items: [FlickrValue] = DisplaySize.allCases.compactMap { size in
            guard let location = sizes.location(photo: photo.sized, size: size) else { return nil }
            return .object([
                ("label", .string(size.label)), ("width", .int(location.width)), ("height", .int(location.height)),
                ("source", .string(urls.url(photo, size: size))), ("url", .string(page)), ("media", .string("photo")),
            ])
        }
        return [
            (
                "sizes",
                .object([("canblog", .int(0)), ("canprint", .int(0)), ("candownload", .int(1)), ("size", .list(items))])
            )
        ]
    }
}
