import Foundation
import ObjectStoreModel
for path in CommandLine.arguments.dropFirst() {
    do { let m = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path)); print("OK", m.entities.map(\.name)) } catch { print(error) }
}
