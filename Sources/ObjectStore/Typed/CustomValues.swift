import Foundation
import ObjectStoreModel
import ObjectStoreStorage

/// Turns the values of a transformable attribute into the bytes a store keeps, and back:
/// Core Data's `ValueTransformer`, typed. A schema names it (`"type": "transformable",
/// "transformer": "ColorTransformer"`); the application registers it under that name.
///
/// ```swift
/// struct Color: Sendable, Equatable { var red, green, blue: UInt8 }
/// struct ColorTransformer: AttributeTransformer {
///     func data(from color: Color) -> Data { Data([color.red, color.green, color.blue]) }
///     func value(from data: Data) throws -> Color {
///         guard data.count == 3 else { throw ValidationMessage("a colour is 3 bytes, not \(data.count)") }
///         return Color(red: data[data.startIndex], green: data[data.startIndex + 1], blue: data[data.startIndex + 2])
///     }
/// }
/// AttributeTransformers.register(ColorTransformer(), forName: "ColorTransformer")
/// ```
public protocol AttributeTransformer<Transformed>: Sendable {
    /// The type of the attribute's values.
    associatedtype Transformed
    /// The bytes stored for a value.
    func data(from value: Transformed) throws -> Data
    /// The value of stored bytes; throws when they are not one.
    func value(from data: Data) throws -> Transformed
}

/// The transformers of transformable attributes, by the name schemas give them (Core Data's
/// `ValueTransformer.setValueTransformer(_:forName:)`). Register them before a transformable
/// value is read or written; a name no transformer has is an error then, never a silent nil.
public enum AttributeTransformers {
    private static let registry = Locked([String: any AttributeTransformer]())

    /// Registers `transformer` under `name`, replacing one registered before.
    public static func register(_ transformer: some AttributeTransformer, forName name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// The transformer registered under `name`.
    public static func transformer(named name: String) -> (any AttributeTransformer)? {
        registry.withLock { $0[name] }
    }

    /// The names transformers are registered under.
    public static var names: [String] { registry.withLock { $0.keys.sorted() } }

    /// The transformer of `attribute`, for values of `T`.
    static func transformer<T>(for attribute: AttributeDescription, of entity: String, as type: T.Type) throws -> any AttributeTransformer<T> {
        guard let name = attribute.valueTransformerName else {
            throw ObjectStoreError.wrongType(entity: entity, key: attribute.name, expected: "a transformable attribute", given: "an attribute of type \(attribute.type.rawValue)")
        }
        guard let registered = transformer(named: name) else {
            throw ObjectStoreError.unknownTransformer(name, entity: entity, key: attribute.name,
                                                      reason: "and no transformer has that name: register one with AttributeTransformers.register(_:forName:)")
        }
        guard let typed = registered as? any AttributeTransformer<T> else {
            throw ObjectStoreError.unknownTransformer(name, entity: entity, key: attribute.name,
                                                      reason: "which transforms values of another type than \(T.self) (\(Swift.type(of: registered)))")
        }
        return typed
    }
}

extension ManagedObject {
    /// The value of a transformable attribute, made from its stored bytes by its transformer;
    /// nil when it has none.
    ///
    /// ```swift
    /// let color = try note.transformedValue(forKey: "color", as: Color.self)
    /// ```
    ///
    /// - Throws: `ObjectStoreError.unknownTransformer` when no transformer of that name (for
    ///   `T`) is registered, `.unconvertibleValue` when it cannot read the bytes, and what
    ///   ``value(forKey:)`` throws.
    public func transformedValue<T>(forKey key: String, as type: T.Type = T.self) throws -> T? {
        let attribute = try transformableAttribute(key)
        let transformer = try AttributeTransformers.transformer(for: attribute, of: entity.name, as: T.self)
        switch try value(forKey: key) {
        case .null: return nil
        case .data(let data):
            do {
                return try transformer.value(from: data)
            } catch {
                throw ObjectStoreError.unconvertibleValue(entity: entity.name, key: key, reason: "its transformer '\(attribute.valueTransformerName ?? "")' cannot read the \(data.count) bytes stored: \(error)")
            }
        case let other:
            throw ObjectStoreError.unconvertibleValue(entity: entity.name, key: key, reason: "holds a \(other.typeName), not the bytes of a transformed value")
        }
    }

    /// Sets a transformable attribute to the bytes its transformer makes of `value` (nil
    /// clears it).
    ///
    /// ```swift
    /// try note.setTransformedValue(Color(red: 200, green: 30, blue: 60), forKey: "color")
    /// ```
    ///
    /// - Throws: as ``transformedValue(forKey:as:)``; nothing is set then.
    public func setTransformedValue<T>(_ value: T?, forKey key: String) throws {
        let attribute = try transformableAttribute(key)
        let transformer = try AttributeTransformers.transformer(for: attribute, of: entity.name, as: T.self)
        guard let value else { return try setValue(.null, forKey: key) }
        let data: Data
        do {
            data = try transformer.data(from: value)
        } catch {
            throw ObjectStoreError.unconvertibleValue(entity: entity.name, key: key, reason: "its transformer '\(attribute.valueTransformerName ?? "")' cannot store the value: \(error)")
        }
        try setValue(.data(data), forKey: key)
    }

    private func transformableAttribute(_ key: String) throws -> AttributeDescription {
        guard let attribute = entity.attribute(named: key) else {
            throw ObjectStoreError.unknownKey(entity: entity.name, key: key, suggestion: NameSuggestion.closest(to: key, in: entity.properties.map(\.name)))
        }
        return attribute
    }
}

/// An enum with raw values as a typed attribute property: its raw value is stored (a string
/// or integer attribute), so predicates compare raw values (`status == 'done'`). The model
/// plugin makes one for an attribute with `"enum"`; an application's own enum conforms by
/// declaring it.
///
/// ```swift
/// enum Status: String, EnumAttributeValue {
///     case open, done
///     static let placeholder = Status.open
/// }
/// final class Ticket: ManagedObject { @Attribute var status: Status }
/// ```
///
/// A stored value that is no case reads as the placeholder, with `lastAccessError` set.
public protocol EnumAttributeValue: AttributeValue, RawRepresentable, CaseIterable where RawValue: AttributeValue {}

extension EnumAttributeValue {
    public static var compatibleTypes: Set<AttributeType> { RawValue.compatibleTypes }
    public init?(storedValue: Value) {
        guard let raw = RawValue(storedValue: storedValue) else { return nil }
        self.init(rawValue: raw)
    }
    public var storedValue: Value { rawValue.storedValue }
    public static func decoding(_ stored: Value) throws -> Self? {
        guard let raw = RawValue(storedValue: stored) else { return nil }
        guard let value = Self(rawValue: raw) else {
            throw AttributeValueError(message: "\(stored) is not a case of \(Self.self) (\(allCases.map { "\($0.rawValue)" }.joined(separator: ", ")))")
        }
        return value
    }
}

/// A Codable value as a typed attribute property, stored as its JSON: text in a string
/// attribute (readable in a JSON store, compared by predicates as that text, keys sorted so
/// equal values store equal text), bytes in a binary one. SwiftData stores Codable structs so.
///
/// ```swift
/// struct Address: CodableAttributeValue, Equatable {
///     var street = "", city = ""
///     static let placeholder = Address()
/// }
/// final class Customer: ManagedObject { @Attribute var address: Address? }
/// ```
///
/// Stored JSON that does not decode reads as the placeholder (nil for an optional property),
/// with `lastAccessError` saying why.
public protocol CodableAttributeValue: AttributeValue, Codable {}

extension CodableAttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.string, .binary] }
    public init?(storedValue: Value) {
        guard let decoded = try? Self.decoding(storedValue) else { return nil }
        self = decoded
    }
    public var storedValue: Value { (try? encodedValue(as: .string)) ?? .null }
    public static func decoding(_ stored: Value) throws -> Self? {
        let data: Data
        switch stored {
        case .string(let text): data = Data(text.utf8)
        case .data(let bytes): data = bytes
        default: return nil
        }
        do {
            return try JSONDecoder().decode(Self.self, from: data)
        } catch {
            throw AttributeValueError(message: "the stored JSON is not a \(Self.self): \(error)")
        }
    }
    public func encodedValue(as type: AttributeType) throws -> Value {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do {
            data = try encoder.encode(self)
        } catch {
            throw AttributeValueError(message: "\(Self.self) does not encode as JSON: \(error)")
        }
        return type == .binary ? .data(data) : .string(String(decoding: data, as: UTF8.self))
    }
}

/// A type of the application as a typed property of a transformable attribute: read and
/// written through the transformer registered under ``transformerName``.
///
/// ```swift
/// extension Color: TransformableAttributeValue {
///     static let transformerName = "ColorTransformer"
///     static let placeholder = Color(red: 0, green: 0, blue: 0)
/// }
/// final class Note: ManagedObject { @Attribute var color: Color? }
/// ```
public protocol TransformableAttributeValue: AttributeValue {
    /// The name the transformer is registered under (the schema's `transformer`).
    static var transformerName: String { get }
}

extension TransformableAttributeValue {
    public static var compatibleTypes: Set<AttributeType> { [.binary] }
    public init?(storedValue: Value) {
        guard let decoded = try? Self.decoding(storedValue) else { return nil }
        self = decoded
    }
    public var storedValue: Value { (try? encodedValue(as: .binary)) ?? .null }
    static func registered() throws -> any AttributeTransformer<Self> {
        guard let registered = AttributeTransformers.transformer(named: transformerName) else {
            throw AttributeValueError(message: "no transformer is registered as '\(transformerName)' (AttributeTransformers.register(_:forName:))")
        }
        guard let typed = registered as? any AttributeTransformer<Self> else {
            throw AttributeValueError(message: "the transformer '\(transformerName)' transforms another type than \(Self.self)")
        }
        return typed
    }
    public static func decoding(_ stored: Value) throws -> Self? {
        guard case .data(let data) = stored else { return nil }
        do {
            return try registered().value(from: data)
        } catch let error as AttributeValueError {
            throw error
        } catch {
            throw AttributeValueError(message: "the transformer '\(transformerName)' cannot read the \(data.count) bytes stored: \(error)")
        }
    }
    public func encodedValue(as type: AttributeType) throws -> Value {
        .data(try Self.registered().data(from: self))
    }
}

/// Why a typed property could not read or write its value (in `lastAccessError`).
public struct AttributeValueError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    public var description: String { message }
}
