import Foundation

extension SchemaLoader {
    // The entities checked against each other: inheritance, inverses, delete rules,
    // constraints and indexes, fetch request templates.

    static func check(_ raws: [RawEntity], log: inout DiagnosticLog) -> [String: EntityDescription] {
        var byName: [String: RawEntity] = [:]
        for raw in raws {
            if byName[raw.name] != nil {
                log.add(raw.path + ".name", raw.location, "duplicate entity name '\(raw.name)'")
                continue
            }
            byName[raw.name] = raw
        }
        let entityNames = raws.map(\.name)

        // Inheritance: unknown parents, cycles and depth. Each entity's ancestors are found
        // once, from its parent's (walking every entity's chain anew, with a search of the
        // chain per step, was cubic: 2,000 levels took 18.6 s).
        var ancestors: [String: [String]] = [:]
        var invalid = Set<String>()
        for raw in byName.values.sorted(by: { $0.path < $1.path }) where ancestors[raw.name] == nil && !invalid.contains(raw.name) {
            // Up from `raw` to a root, a resolved entity, or a problem.
            var path = [raw]
            var onPath = [raw.name: 0]
            var valid = true
            var top = raw
            while let parent = top.parent, ancestors[parent.name] == nil {
                if invalid.contains(parent.name) { valid = false; break }
                guard let parentRaw = byName[parent.name] else {
                    log.add(parent.path, parent.location, "\(top.name): unknown parent entity '\(parent.name)'\(NameSuggestion.hint(for: parent.name, in: entityNames))")
                    valid = false
                    break
                }
                if let start = onPath[parentRaw.name] {
                    // Each entity on the cycle reports it at its own "parent" key (a long
                    // cycle only at one, shortened); one that merely inherits from the
                    // cycle is not blamed.
                    let cycle = Array(path[start...])
                    for (index, member) in cycle.enumerated() where cycle.count <= 8 || index == 0 {
                        guard let own = member.parent else { continue }
                        let names = (cycle[index...] + cycle[..<index]).map(\.name)
                        let shown = names.count <= 8 ? names.joined(separator: " -> ")
                            : names.prefix(3).joined(separator: " -> ") + " -> ... (\(names.count) entities)"
                        log.add(own.path, own.location, "\(member.name): inheritance cycle \(shown) -> \(member.name)")
                    }
                    valid = false
                    break
                }
                onPath[parentRaw.name] = path.count
                path.append(parentRaw)
                top = parentRaw
            }
            guard valid else {
                for member in path { invalid.insert(member.name) }
                continue
            }
            // Down again, each entity's ancestors its parent and the parent's ancestors.
            var above = top.parent.flatMap { parent in ancestors[parent.name].map { [parent.name] + $0 } } ?? []
            var depth = above.count
            for member in path.reversed() {
                if depth > Self.maxInheritanceDepth {
                    // Reported once, where the chain first passes the limit; the entities
                    // below it inherit the problem without a message of their own.
                    if depth == Self.maxInheritanceDepth + 1, let own = member.parent {
                        log.add(own.path, own.location, "\(member.name): inheritance is more than \(Self.maxInheritanceDepth) levels deep (\(member.name) -> \(above.prefix(3).joined(separator: " -> ")) -> ...)")
                    }
                    invalid.insert(member.name)
                } else {
                    ancestors[member.name] = above
                    above = [member.name] + above
                }
                depth += 1
            }
        }

        // Direct sub-entities.
        var children: [String: [String]] = [:]
        for raw in byName.values {
            if let parent = raw.parent?.name, ancestors[raw.name] != nil { children[parent, default: []].append(raw.name) }
        }

        // Properties, parents first so each child extends its parent's layout.
        var built: [String: EntityDescription] = [:]
        let ordered = ancestors.keys.sorted { (ancestors[$0]?.count ?? 0, $0) < (ancestors[$1]?.count ?? 0, $1) }
        for name in ordered {
            guard let raw = byName[name] else { continue }
            let parent = raw.parent.flatMap { built[$0.name] }
            let inherited = parent?.properties ?? []
            let inheritedFetched = parent?.fetchedProperties ?? []
            var own: [String: (PropertyDescription, String, SourceLocation)] = [:]
            var ownFetched: [FetchedPropertyDescription] = []
            func claim(_ propertyName: String, path: String, location: SourceLocation) -> Bool {
                if inherited.contains(where: { $0.name == propertyName }) || inheritedFetched.contains(where: { $0.name == propertyName }) {
                    log.add(path + ".name", location, "\(name).\(propertyName) redeclares a property inherited from \(raw.parent?.name ?? "its parent")")
                    return false
                }
                if own[propertyName] != nil || ownFetched.contains(where: { $0.name == propertyName }) {
                    log.add(path + ".name", location, "duplicate property name '\(propertyName)' in entity \(name)")
                    return false
                }
                return true
            }
            for (attribute, path, location) in raw.attributes where claim(attribute.name, path: path, location: location) {
                own[attribute.name] = (.attribute(attribute), path, location)
            }
            for (relationship, path, location) in raw.relationships where claim(relationship.name, path: path, location: location) {
                own[relationship.name] = (.relationship(relationship), path, location)
            }
            var unread: Set<String> = []
            for (propertyName, path, location) in raw.unreadProperties {
                if own[propertyName] != nil || !unread.insert(propertyName).inserted {
                    log.add(path + ".name", location, "duplicate property name '\(propertyName)' in entity \(name)")
                }
            }
            for (fetched, path, location) in raw.fetchedProperties where claim(fetched.name, path: path, location: location) {
                ownFetched.append(fetched)
                if byName[fetched.destinationEntityName] == nil {
                    log.add(path + ".destination", location, "\(name).\(fetched.name): unknown destination entity '\(fetched.destinationEntityName)'\(NameSuggestion.hint(for: fetched.destinationEntityName, in: entityNames))")
                }
            }
            let ownProperties = own.keys.sorted().compactMap { own[$0]?.0 }
            let properties = inherited + ownProperties
            let propertyNames = properties.map(\.name)

            for (names, path, location) in raw.uniquenessConstraints {
                for key in names where !properties.contains(where: { $0.name == key && $0.attribute != nil }) {
                    log.add(path, location, "\(name): uniqueness constraint names '\(key)', which is not an attribute of \(name)\(NameSuggestion.hint(for: key, in: propertyNames))")
                }
            }
            for (index, path, location) in raw.indexes {
                for key in index.propertyNames {
                    guard let property = properties.first(where: { $0.name == key }) else {
                        log.add(path + ".properties", location, "\(name): index '\(index.name)' names '\(key)', which is not a property of \(name)\(NameSuggestion.hint(for: key, in: propertyNames))")
                        continue
                    }
                    if let relationship = property.relationship, relationship.isToMany {
                        log.add(path + ".properties", location, "\(name): index '\(index.name)' names the to-many relationship '\(key)'; only attributes and to-one relationships can be indexed")
                    }
                }
            }

            built[name] = EntityDescription(
                name: name, parentName: raw.parent?.name, isAbstract: raw.isAbstract, userInfo: raw.userInfo,
                renamingIdentifier: raw.renamingIdentifier, versionHashModifier: raw.versionHashModifier,
                uniquenessConstraints: raw.uniquenessConstraints.map(\.names), indexes: raw.indexes.map(\.0),
                properties: properties, inheritedPropertyCount: inherited.count,
                fetchedProperties: inheritedFetched + ownFetched, ancestorNames: ancestors[name] ?? [],
                subentityNames: (children[name] ?? []).sorted(),
                // Ancestors are built first (fewer ancestors first).
                inheritedUniquenessConstraints: (ancestors[name] ?? []).flatMap { built[$0]?.uniquenessConstraints ?? [] })
        }

        // Relationships: destinations, inverses, abstract destinations.
        func hasConcreteKind(_ entityName: String) -> Bool {
            guard let raw = byName[entityName] else { return false }
            if !raw.isAbstract { return true }
            return (children[entityName] ?? []).contains(where: hasConcreteKind)
        }
        for raw in raws where byName[raw.name]?.path == raw.path {
            for (relationship, path, location) in raw.relationships {
                let qualified = "\(raw.name).\(relationship.name)"
                guard let destination = byName[relationship.destinationEntityName] else {
                    log.add(path + ".destination", location, "\(qualified): unknown destination entity '\(relationship.destinationEntityName)'\(NameSuggestion.hint(for: relationship.destinationEntityName, in: entityNames))")
                    continue
                }
                if !hasConcreteKind(destination.name) {
                    log.add(path + ".destination", location, "\(qualified): destination \(destination.name) is abstract and has no concrete sub-entity, so nothing could ever be related")
                }
                guard let inverseName = relationship.inverseName else { continue }
                guard let destinationEntity = built[destination.name] else { continue }
                guard let inverse = destinationEntity.relationship(named: inverseName) else {
                    let candidates = destinationEntity.relationships.map(\.name)
                    log.add(path + ".inverse", location, "\(qualified): inverse '\(inverseName)' is not a relationship of \(destination.name)\(NameSuggestion.hint(for: inverseName, in: candidates))")
                    continue
                }
                let sourceKinds = [raw.name] + (ancestors[raw.name] ?? [])
                if !sourceKinds.contains(inverse.destinationEntityName) {
                    log.add(path + ".inverse", location, "\(qualified): inverse \(destination.name).\(inverseName) points to \(inverse.destinationEntityName), not back to \(raw.name)")
                } else if inverse.inverseName != relationship.name {
                    let actual = inverse.inverseName.map { "names '\($0)' as its inverse" } ?? "has no inverse"
                    log.add(path + ".inverse", location, "\(qualified): inverse \(destination.name).\(inverseName) \(actual); it must name '\(relationship.name)' to point back")
                } else if relationship.isDerivedFromInverse && relationship.isToMany && (inverse.isDerivedFromInverse || inverse.isTransient) {
                    let why = inverse.isTransient ? "is transient" : "is derived from this one too"
                    log.add(path + ".derivedFromInverse", location, "\(qualified): its inverse \(destination.name).\(inverseName) \(why); one side of a pair must be stored")
                }
            }
        }
        return built
    }

    static func checkTemplates(_ templates: [(FetchRequestTemplate, path: String, location: SourceLocation)], entities: [String: EntityDescription], log: inout DiagnosticLog) {
        var seen: Set<String> = []
        for (template, path, location) in templates {
            if !seen.insert(template.name).inserted {
                log.add(path + ".name", location, "duplicate fetch request name '\(template.name)'")
            }
            guard let entity = entities[template.entityName] else {
                log.add(path + ".entity", location, "fetch request \(template.name): unknown entity '\(template.entityName)'\(NameSuggestion.hint(for: template.entityName, in: entities.keys.sorted()))")
                continue
            }
            for (i, sort) in template.sortDescriptors.enumerated() {
                let first = String(sort.keyPath.split(separator: ".", maxSplits: 1).first ?? "")
                if entity.property(named: first) == nil {
                    log.add("\(path).sort[\(i)].key", location, "fetch request \(template.name): '\(first)' is not a property of \(entity.name)\(NameSuggestion.hint(for: first, in: entity.properties.map(\.name)))")
                }
            }
        }
    }
}
