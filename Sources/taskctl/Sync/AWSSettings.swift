import Foundation
import ObjectStoreSync

/// The S3 bucket of `sync.aws.*`: its credentials, region and endpoint found where
/// Taskwarrior 3 (through the AWS SDK) finds them.
enum AWSSettings {
    /// An access key, with the session token of temporary credentials.
    struct Credentials {
        var accessKeyID: String
        var secretAccessKey: String
        var sessionToken: String?
    }

    /// The access key: the settings' key pair, else the named profile of the shared
    /// credentials file, else (with `sync.aws.default_credentials = true`) the AWS
    /// environment variables or the profile `AWS_PROFILE` names (`default` without it).
    static func credentials(_ config: Config, environment: [String: String], configPath: String) throws -> Credentials {
        if config.syncAWSAccessKeyID != nil || config.syncAWSSecretAccessKey != nil {
            guard let id = config.syncAWSAccessKeyID, let secret = config.syncAWSSecretAccessKey else {
                let missing = config.syncAWSAccessKeyID == nil ? "sync.aws.access_key_id" : "sync.aws.secret_access_key"
                throw CLIError.usage("sync through S3 needs \(missing) in \(configPath) beside the other half of the key")
            }
            return Credentials(accessKeyID: id, secretAccessKey: secret)
        }
        if let profile = config.syncAWSProfile {
            return try profileCredentials(profile, environment: environment)
        }
        if config.syncAWSDefaultCredentials {
            if let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty, let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
                return Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
            }
            return try profileCredentials(environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default", environment: environment)
        }
        throw CLIError.usage("sync through S3 needs credentials in \(configPath): sync.aws.access_key_id and sync.aws.secret_access_key, sync.aws.profile, or sync.aws.default_credentials = true (see 'taskctl help sync')")
    }

    /// `AWS_SHARED_CREDENTIALS_FILE`, or `~/.aws/credentials`.
    static func credentialsFile(_ environment: [String: String]) -> String {
        if let file = environment["AWS_SHARED_CREDENTIALS_FILE"], !file.isEmpty { return file }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.aws/credentials"
    }

    /// A profile's `aws_access_key_id`, `aws_secret_access_key` (and `aws_session_token`) in
    /// the shared credentials file (an INI file: `[name]` sections of `key = value`).
    static func profileCredentials(_ profile: String, environment: [String: String]) throws -> Credentials {
        let file = credentialsFile(environment)
        guard let data = FileManager.default.contents(atPath: file) else {
            throw CLIError.usage("sync through S3: cannot read the AWS credentials file \(file) (for the profile '\(profile)')")
        }
        var section = "", values: [String: String] = [:]
        for raw in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let line = raw.trimmingBlanks()
            if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = line.dropFirst().dropLast().trimmingBlanks()
                continue
            }
            guard section == profile, let equals = line.firstIndex(of: "=") else { continue }
            values[line[..<equals].trimmingBlanks().lowercased()] = line[line.index(after: equals)...].trimmingBlanks()
        }
        guard let id = values["aws_access_key_id"], let secret = values["aws_secret_access_key"] else {
            throw CLIError.usage("sync through S3: the profile '\(profile)' in \(file) has no aws_access_key_id and aws_secret_access_key")
        }
        return Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"])
    }

    /// `sync.aws.region`, else `AWS_REGION` or `AWS_DEFAULT_REGION`, else nil (us-east-1).
    static func region(_ config: Config, environment: [String: String]) -> String? {
        config.syncAWSRegion ?? [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]].compactMap { $0 }.first { !$0.isEmpty }
    }

    /// `sync.aws.endpoint_url`, else the SDK's `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`;
    /// nil for AWS itself.
    static func endpoint(_ config: Config, environment: [String: String]) throws -> URL? {
        guard let text = config.syncAWSEndpoint ?? [environment["AWS_ENDPOINT_URL_S3"], environment["AWS_ENDPOINT_URL"]].compactMap({ $0 }).first(where: { !$0.isEmpty }) else {
            return nil
        }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw CLIError.usage("sync through S3: the endpoint '\(text)' is not an http:// or https:// URL")
        }
        return url
    }
}
