import Foundation
import ObjectStoreModel

/// "Did you mean" for command-line words.
enum NameHint {
    static func closest(to word: String, in candidates: [String]) -> String? {
        NameSuggestion.closest(to: word, in: candidates)
    }
}
