/// `flickr.photosets.getList` and `flickr.photosets.getPhotos`: galleries as Flickr's photosets.
extension FlickrAPI {
    /// Photosets per page when `per_page` is absent, and at most (Flickr's 500 for both).
    static let photosetPageSize = 500

    /// `page` and `per_page` of the photoset methods: 500 by default and at most.
    private func photosetPaging(_ parameters: FlickrParameters) -> (page: Int, perPage: Int) {
        var paging = FlickrSearch.paging(parameters)
        if parameters["per_page"].flatMap({ Int($0) }).map({ $0 < 1 }) ?? true {
            paging.perPage = Self.photosetPageSize
        }
        return paging
    }

    /// `flickr.photosets.getList`: the galleries of `user_id` (the caller's own without one) that
    /// the caller may read; code 1 for an unknown user, or no `user_id` without a session.
    func photosetList(_ parameters: FlickrParameters, caller: ParseCaller) throws -> [FlickrValue.Entry] {
        let owner: String
        if let user = parameters.nonEmpty("user_id") {
            guard try repository.username(user) != nil else { throw FlickrError.userNotFound }
            owner = user
        } else {
            guard let me = caller.userId else { throw FlickrError.userNotFound }
            owner = me
        }
        let (page, perPage) = photosetPaging(parameters)
        let (sets, total) = try repository.photosets(ownerId: owner, caller: caller, page: page, perPage: perPage)
        let items: [FlickrValue] = sets.map { photoset in
            .object([
                ("id", .string(photoset.id)), ("owner", .string(photoset.ownerId)),
                ("username", .string(photoset.ownerName)),
                ("primary", .string(photoset.primary ?? "")),
                ("secret", .string(photoset.primary.map(urls.secret) ?? "")),
                ("server", .string(FlickrAssetURLs.server)), ("farm", .int(FlickrAssetURLs.farm)),
                ("photos", .int(photoset.count)), ("videos", .int(0)), ("title", .text(photoset.title)),
                ("description", .text("")),
                ("date_create", .string(String(photoset.created))), ("date_update", .string(String(photoset.updated))),
            ])
        }
        return [
            (
                "photosets",
                .object(Self.paging(page: page, perPage: perPage, total: total) + [("photoset", .list(items))])
            )
        ]
    }

    /// `flickr.photosets.getPhotos`: a page of a gallery's photos in its order, with `extras`;
    /// code 1 for a gallery that does not exist or the caller may not read.
    func photosetPhotos(_ parameters: FlickrParameters, caller: ParseCaller) throws -> [FlickrValue.Entry] {
        guard let id = parameters.nonEmpty("photoset_id"), ParseObjectID.isPlausible(id),
            let photoset = try repository.photoset(id, caller: caller)
        else { throw FlickrError.photosetNotFound }
        let (page, perPage) = photosetPaging(parameters)
        let photos = try repository.photosetPhotos(id, page: page, perPage: perPage)
        let extras = FlickrExtras(parameters["extras"])
        let base = urls.publicURL()
        let items = photos.map { listed($0, extras: extras, base: base, isPrimary: $0.id == photoset.primary) }
        let total = photoset.count
        let entries: [FlickrValue.Entry] = [
            ("id", .string(photoset.id)), ("primary", .string(photoset.primary ?? "")),
            ("owner", .string(photoset.ownerId)),
            ("ownername", .string(photoset.ownerName)), ("photo", .list(items)), ("page", .int(page)),
            ("per_page", .int(perPage)),
            ("perpage", .int(perPage)), ("pages", .int((total + perPage - 1) / perPage)),
            ("title", .string(photoset.title)),
            ("total", .int(total)),
        ]
        return [("photoset", .object(entries))]
    }
}
