//! Secrets kept out: the credential rules every text is checked against before a save or an
//! import stores it, so an API key pasted into a memory is refused instead of erased later
//! (docs/adr/0020-secrets-kept-out.md, docs/privacy.md).
//!
//! The rule set follows the shape of gitleaks' configuration: each rule has an id, a
//! description, keywords, a regular expression, and (for the generic rules) an entropy floor
//! and stopwords. The provider formats are anchored to gitleaks' `config/gitleaks.toml` rule of
//! the same id and to trufflehog's detector of the same provider; each rule names its anchor.
//! A text is lower-cased once and searched for every rule's keywords in one Aho-Corasick pass;
//! only the rules whose keyword occurs run their expression, so a save without a keyword costs
//! one linear scan. A finding names its rule, never the secret.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;

/// One credential format.
struct Rule {
    /// The rule's id (gitleaks' where it has one), shown to the user.
    id: &'static str,
    /// What was found, in words.
    description: &'static str,
    /// Lower-case strings one of which every match contains: the prefilter.
    keywords: &'static [&'static str],
    /// The expression; its first group, when it has one, is the secret itself (what the
    /// entropy floor and the stopwords judge).
    pattern: &'static str,
    /// What a match must pass besides the expression.
    check: Check,
}

/// The test a match passes to count, besides its rule's expression.
#[derive(Clone, Copy)]
enum Check {
    /// The format is the proof: every match counts.
    Format,
    /// The secret (the first group) must not be a placeholder such as `${PGPASSWORD}` or `****`.
    NotPlaceholder,
    /// The secret must be no placeholder or stopword and have at least this Shannon entropy
    /// (bits per character): for the generic rules, whose keywords also start plain words.
    Entropy(f64),
}

/// The rules. Anchors: "gitleaks: ID" is the rule of that id in gitleaks' configuration,
/// "trufflehog: NAME" the detector of that name in trufflehog's `pkg/detectors`.
const RULES: &[Rule] = &[
    // gitleaks: aws-access-token; trufflehog: aws. Documented examples (…EXAMPLE) are refused
    // too, unlike gitleaks' allowlist: a memory is not documentation (docs/privacy.md).
    Rule {
        id: "aws-access-token",
        description: "AWS access key id",
        keywords: &["a3t", "akia", "asia", "abia", "acca"],
        pattern: r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
        check: Check::Format,
    },
    // trufflehog: aws (the secret half of the pair, named beside its keyword).
    Rule {
        id: "aws-secret-access-key",
        description: "AWS secret access key",
        keywords: &["aws_secret", "aws-secret", "awssecret", "secret_access_key", "secretaccesskey"],
        pattern: r#"(?i)(?:aws_?secret_?access_?key|aws-secret-access-key|secret_?access_?key)["'`]?\s*(?::=|=>|=|:)\s*["'`]?([A-Za-z0-9/+=]{40})\b"#,
        check: Check::Entropy(3.0),
    },
    // gitleaks: github-pat, github-oauth, github-app-token, github-refresh-token; trufflehog: github.
    Rule {
        id: "github-token",
        description: "GitHub token",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        pattern: r"\bgh[pousr]_[0-9A-Za-z]{36}\b",
        check: Check::Format,
    },
    // gitleaks: github-fine-grained-pat.
    Rule {
        id: "github-fine-grained-pat",
        description: "GitHub fine-grained personal access token",
        keywords: &["github_pat_"],
        pattern: r"\bgithub_pat_[0-9A-Za-z_]{82}\b",
        check: Check::Format,
    },
    // gitleaks: gitlab-pat, gitlab-ptt, gitlab-deploy-token, gitlab-runner-authentication-token; trufflehog: gitlab.
    Rule {
        id: "gitlab-token",
        description: "GitLab token",
        keywords: &["glpat-", "glptt-", "gldt-", "glrt-", "gloas-"],
        pattern: r"\b(?:glpat-[0-9A-Za-z_-]{20,}|glptt-[0-9a-f]{40}|gldt-[0-9A-Za-z_-]{20,}|glrt-[0-9A-Za-z_-]{20,}|gloas-[0-9A-Za-z_-]{64})",
        check: Check::Format,
    },
    // gitleaks: slack-bot-token, slack-user-token, slack-app-token, slack-legacy-token; trufflehog: slack.
    Rule {
        id: "slack-token",
        description: "Slack token",
        keywords: &["xoxb-", "xoxp-", "xoxe-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xapp-"],
        pattern: r"\b(?:xox[bpeaosr]-[0-9]{1,13}-[0-9A-Za-z-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)",
        check: Check::Format,
    },
    // gitleaks: slack-webhook-url; trufflehog: slackwebhook.
    Rule {
        id: "slack-webhook-url",
        description: "Slack webhook URL",
        keywords: &["hooks.slack.com"],
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}",
        check: Check::Format,
    },
    // gitleaks: stripe-access-token; trufflehog: stripe.
    Rule {
        id: "stripe-access-token",
        description: "Stripe API key",
        keywords: &["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"],
        pattern: r"\b(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{10,99}\b",
        check: Check::Format,
    },
    // gitleaks: openai-api-key; trufflehog: openai (the T3BlbkFJ marker every key carries).
    Rule {
        id: "openai-api-key",
        description: "OpenAI API key",
        keywords: &["t3blbkfj", "sk-proj-", "sk-svcacct-", "sk-admin-"],
        pattern: r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,})",
        check: Check::Format,
    },
    // gitleaks: anthropic-api-key, anthropic-admin-api-key; trufflehog: anthropic.
    Rule {
        id: "anthropic-api-key",
        description: "Anthropic API key",
        keywords: &["sk-ant-"],
        pattern: r"\bsk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{80,}",
        check: Check::Format,
    },
    // gitleaks: gcp-api-key; trufflehog: googleapikey.
    Rule {
        id: "gcp-api-key",
        description: "Google API key",
        keywords: &["aiza"],
        pattern: r"\bAIza[0-9A-Za-z_-]{35}\b",
        check: Check::Format,
    },
    // gitleaks: gcp-service-account (a key file's private key id and key pasted as JSON).
    Rule {
        id: "gcp-service-account",
        description: "Google service account key",
        keywords: &["\"private_key_id\""],
        pattern: r#""private_key_id"\s*:\s*"[0-9a-f]{40}""#,
        check: Check::Format,
    },
    // trufflehog: gcpoauth (Google's GOCSPX- prefix of OAuth client secrets).
    Rule {
        id: "google-oauth-client-secret",
        description: "Google OAuth client secret",
        keywords: &["gocspx-"],
        pattern: r"\bGOCSPX-[0-9A-Za-z_-]{28}",
        check: Check::Format,
    },
    // gitleaks: sendgrid-api-token; trufflehog: sendgrid.
    Rule {
        id: "sendgrid-api-token",
        description: "SendGrid API key",
        keywords: &["sg."],
        pattern: r"\bSG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}\b",
        check: Check::Format,
    },
    // gitleaks: twilio-api-key; trufflehog: twilio.
    Rule {
        id: "twilio-api-key",
        description: "Twilio API key",
        keywords: &["sk"],
        pattern: r"\bSK[0-9a-fA-F]{32}\b",
        check: Check::Format,
    },
    // gitleaks: npm-access-token; trufflehog: npmtoken.
    Rule {
        id: "npm-access-token",
        description: "npm access token",
        keywords: &["npm_"],
        pattern: r"\bnpm_[0-9A-Za-z]{36}\b",
        check: Check::Format,
    },
    // gitleaks: pypi-upload-token; trufflehog: pypi.
    Rule {
        id: "pypi-upload-token",
        description: "PyPI upload token",
        keywords: &["pypi-ageichlwas5vcmc"],
        pattern: r"\bpypi-AgEIcHlwaS5vcmc[0-9A-Za-z_-]{50,}",
        check: Check::Format,
    },
    // gitleaks: huggingface-access-token, huggingface-organization-api-token; trufflehog: huggingface.
    Rule {
        id: "huggingface-access-token",
        description: "Hugging Face token",
        keywords: &["hf_", "api_org_"],
        pattern: r"\b(?:hf_[A-Za-z]{34}|api_org_[A-Za-z]{34})\b",
        check: Check::Format,
    },
    // gitleaks: shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret.
    Rule {
        id: "shopify-token",
        description: "Shopify token",
        keywords: &["shpat_", "shpca_", "shppa_", "shpss_"],
        pattern: r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b",
        check: Check::Format,
    },
    // gitleaks: digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token; trufflehog: digitaloceanv2.
    Rule {
        id: "digitalocean-token",
        description: "DigitalOcean token",
        keywords: &["dop_v1_", "doo_v1_", "dor_v1_"],
        pattern: r"\bdo[opr]_v1_[0-9a-f]{64}\b",
        check: Check::Format,
    },
    // gitleaks: vault-service-token, vault-batch-token; trufflehog: vault.
    Rule {
        id: "vault-token",
        description: "HashiCorp Vault token",
        keywords: &["hvs.", "hvb."],
        pattern: r"\bhv[sb]\.[0-9A-Za-z_-]{90,}",
        check: Check::Format,
    },
    // gitleaks: hashicorp-tf-api-token; trufflehog: terraformcloudpersonaltoken.
    Rule {
        id: "hashicorp-tf-api-token",
        description: "Terraform Cloud API token",
        keywords: &[".atlasv1."],
        pattern: r"\b[0-9A-Za-z]{14}\.atlasv1\.[0-9A-Za-z_=-]{60,70}",
        check: Check::Format,
    },
    // gitleaks: databricks-api-token; trufflehog: databrickstoken.
    Rule {
        id: "databricks-api-token",
        description: "Databricks token",
        keywords: &["dapi"],
        pattern: r"\bdapi[0-9a-h]{32}(?:-\d)?\b",
        check: Check::Format,
    },
    // trufflehog: discordwebhook.
    Rule {
        id: "discord-webhook-url",
        description: "Discord webhook URL",
        keywords: &["/api/webhooks/"],
        pattern: r"discord(?:app)?\.com/api/webhooks/\d{5,30}/[0-9A-Za-z_-]{20,}",
        check: Check::Format,
    },
    // gitleaks: mailchimp-api-key; trufflehog: mailchimp.
    Rule {
        id: "mailchimp-api-key",
        description: "Mailchimp API key",
        keywords: &["-us"],
        pattern: r"\b[0-9a-f]{32}-us\d{1,2}\b",
        check: Check::Format,
    },
    // gitleaks: atlassian-api-token; trufflehog: atlassian.
    Rule {
        id: "atlassian-api-token",
        description: "Atlassian API token",
        keywords: &["atatt3"],
        pattern: r"\bATATT3[0-9A-Za-z_=-]{180,}",
        check: Check::Format,
    },
    // gitleaks: linear-api-key; trufflehog: linearapi.
    Rule {
        id: "linear-api-key",
        description: "Linear API key",
        keywords: &["lin_api_"],
        pattern: r"\blin_api_[0-9A-Za-z]{40}\b",
        check: Check::Format,
    },
    // gitleaks: postman-api-token; trufflehog: postman.
    Rule {
        id: "postman-api-token",
        description: "Postman API key",
        keywords: &["pmak-"],
        pattern: r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b",
        check: Check::Format,
    },
    // gitleaks: doppler-api-token; trufflehog: doppler.
    Rule {
        id: "doppler-api-token",
        description: "Doppler token",
        keywords: &["dp.pt.", "dp.st.", "dp.sa."],
        pattern: r"\bdp\.(?:pt|st|sa)\.[0-9A-Za-z]{40,44}\b",
        check: Check::Format,
    },
    // gitleaks: grafana-cloud-api-token, grafana-service-account-token; trufflehog: grafana.
    Rule {
        id: "grafana-token",
        description: "Grafana token",
        keywords: &["glc_", "glsa_"],
        pattern: r"\b(?:glc_[0-9A-Za-z+/]{32,400}={0,2}|glsa_[0-9A-Za-z]{32}_[0-9a-fA-F]{8})",
        check: Check::Format,
    },
    // gitleaks: age-secret-key.
    Rule {
        id: "age-secret-key",
        description: "age secret key",
        keywords: &["age-secret-key-1"],
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        check: Check::Format,
    },
    // gitleaks: square-access-token, square-secret; trufflehog: square.
    Rule {
        id: "square-token",
        description: "Square token",
        keywords: &["sq0atp-", "sq0csp-", "eaaa"],
        pattern: r"\b(?:sq0atp-[0-9A-Za-z_-]{22}|sq0csp-[0-9A-Za-z_-]{43}|EAAA[0-9A-Za-z_+=-]{60})\b",
        check: Check::Format,
    },
    // gitleaks: new-relic-user-api-key; trufflehog: newrelicpersonalapikey.
    Rule {
        id: "new-relic-user-api-key",
        description: "New Relic API key",
        keywords: &["nrak-"],
        pattern: r"\bNRAK-[0-9A-Z]{27}\b",
        check: Check::Format,
    },
    // gitleaks: heroku-api-key-v2; trufflehog: heroku.
    Rule {
        id: "heroku-api-key",
        description: "Heroku API key",
        keywords: &["hrku-"],
        pattern: r"\bHRKU-AA[0-9A-Za-z_-]{58}\b",
        check: Check::Format,
    },
    // gitleaks: flyio-access-token; trufflehog: flyio.
    Rule {
        id: "flyio-access-token",
        description: "Fly.io token",
        keywords: &["fo1_", "fm1", "fm2_"],
        pattern: r"\b(?:fo1_[0-9A-Za-z_-]{43}|fm[12][ar]?_[0-9A-Za-z+/]{100,}={0,3})",
        check: Check::Format,
    },
    // gitleaks: pulumi-api-token; trufflehog: pulumi.
    Rule {
        id: "pulumi-api-token",
        description: "Pulumi access token",
        keywords: &["pul-"],
        pattern: r"\bpul-[0-9a-f]{40}\b",
        check: Check::Format,
    },
    // gitleaks: sentry-user-token, sentry-org-token; trufflehog: sentrytoken.
    Rule {
        id: "sentry-token",
        description: "Sentry token",
        keywords: &["sntryu_", "sntrys_"],
        pattern: r"\b(?:sntryu_[0-9a-f]{64}|sntrys_eyJ[0-9A-Za-z+/=_-]{60,})",
        check: Check::Format,
    },
    // trufflehog: azurestorage (the account key of a storage connection string).
    Rule {
        id: "azure-storage-account-key",
        description: "Azure storage account key",
        keywords: &["accountkey="],
        pattern: r"(?i)AccountKey=[0-9A-Za-z+/]{86}==",
        check: Check::Format,
    },
    // gitleaks: private-key; trufflehog: privatekey. A header with a body, not the bare header.
    Rule {
        id: "private-key",
        description: "private key (PEM block)",
        keywords: &["-----begin"],
        pattern: r"(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{32,}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
        check: Check::Format,
    },
    // gitleaks: private-key (an unterminated block: the header and the start of its body).
    Rule {
        id: "private-key",
        description: "private key (PEM block)",
        keywords: &["-----begin"],
        pattern: r"(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----\s*[0-9A-Za-z+/=]{40,}",
        check: Check::Format,
    },
    // gitleaks: jwt; trufflehog: jwt. Header and payload both base64url JSON objects ("eyJ").
    Rule {
        id: "jwt",
        description: "JSON Web Token",
        keywords: &["eyj"],
        pattern: r"\beyJ[0-9A-Za-z_-]{15,}\.eyJ[0-9A-Za-z_-]{15,}\.[0-9A-Za-z_-]{10,}={0,2}",
        check: Check::Format,
    },
    // gitleaks: generic-api-key's `bearer` case; trufflehog: the Authorization header of its
    // generic detectors. The token must look random (entropy), so "bearer tokens expire" passes.
    Rule {
        id: "bearer-token",
        description: "bearer token",
        keywords: &["bearer"],
        pattern: r"(?i)\bbearer\s+([0-9A-Za-z._~+/-]{20,}=*)",
        check: Check::Entropy(3.0),
    },
    // trufflehog: uri's credentials, as an Authorization header carries them (base64 user:password).
    Rule {
        id: "basic-auth-header",
        description: "HTTP basic credentials",
        keywords: &["basic"],
        pattern: r"(?i)\bauthorization\s*:\s*basic\s+([0-9A-Za-z+/]{12,}={0,2})",
        check: Check::Entropy(2.5),
    },
    // trufflehog: uri (a password between the user and the host of a URL). Placeholders such as
    // `${PGPASSWORD}`, `<password>` or `****` are stopwords.
    Rule {
        id: "password-in-url",
        description: "password in a URL",
        keywords: &["://"],
        pattern: r"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/@]+:([^\s/@]+)@[^\s/@]+",
        check: Check::NotPlaceholder,
    },
    // gitleaks: generic-api-key's password case in a connection string (ADO.NET, ODBC, JDBC
    // properties): `…;Password=…;` or a text that starts with it.
    Rule {
        id: "password-in-connection-string",
        description: "password in a connection string",
        keywords: &["password", "pwd"],
        pattern: r"(?im)(?:^|;)\s*(?:password|pwd)\s*=\s*([^;\s]+)",
        check: Check::NotPlaceholder,
    },
    // gitleaks: generic-api-key (a secret-named key assigned a random-looking value: the
    // entropy floor is gitleaks' 3.5, and its stopwords pass).
    Rule {
        id: "generic-api-key",
        description: "secret assigned to a key, token or password field",
        keywords: &["key", "token", "secret", "passwd", "password", "pwd", "credential", "auth"],
        pattern: r#"(?i)\b[a-z0-9_.-]*(?:key|token|secret|passwd|password|pwd|credentials?|auth)\b["'`]?\s*(?::=|=>|=|:)\s*["'`]?([0-9A-Za-z_.~+/!@#$%^&*=-]{8,150})"#,
        check: Check::Entropy(3.5),
    },
];

/// Values a generic rule's secret may take that are placeholders, not secrets (after gitleaks'
/// stopwords): compared lower-cased, whole or as the value's start.
const STOPWORDS: &[&str] = &[
    "changeme",
    "change_me",
    "example",
    "placeholder",
    "redacted",
    "your_",
    "your-",
    "yourapikey",
    "insert",
    "replace",
    "dummy",
    "sample",
    "undefined",
    "process.env",
    "os.environ",
    "env.",
    "secrets.",
    "config.",
    "settings.",
    "getenv",
];

/// What a scan found: the rule's id and description, never the text it matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub description: &'static str,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (rule {})", self.description, self.rule)
    }
}

/// The compiled rules and their keyword prefilter.
struct Detector {
    rules: Vec<Regex>,
    keywords: AhoCorasick,
    /// For each keyword of `keywords`, the rule it belongs to.
    keyword_rule: Vec<usize>,
}

fn detector() -> &'static Detector {
    static DETECTOR: OnceLock<Detector> = OnceLock::new();
    DETECTOR.get_or_init(|| {
        let rules = RULES.iter().map(|r| Regex::new(r.pattern).expect("a rule's pattern compiles")).collect();
        let mut words = Vec::new();
        let mut keyword_rule = Vec::new();
        for (i, rule) in RULES.iter().enumerate() {
            for word in rule.keywords {
                words.push(*word);
                keyword_rule.push(i);
            }
        }
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&words)
            .expect("the keywords build an automaton");
        Detector { rules, keywords, keyword_rule }
    })
}

/// The credentials `text` holds, one finding per rule (in the rules' order), none for a text
/// that holds none.
pub fn scan(text: &str) -> Vec<Finding> {
    let detector = detector();
    let mut wanted = vec![false; RULES.len()];
    let mut any = false;
    for m in detector.keywords.find_overlapping_iter(text) {
        wanted[detector.keyword_rule[m.pattern().as_usize()]] = true;
        any = true;
    }
    if !any {
        return Vec::new();
    }
    let mut found: Vec<Finding> = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        if !wanted[i] || found.iter().any(|f| f.rule == rule.id) {
            continue;
        }
        if detector.rules[i].captures_iter(text).any(|c| is_secret(rule, c.get(1).map_or(&c[0], |g| g.as_str()))) {
            found.push(Finding { rule: rule.id, description: rule.description });
        }
    }
    found
}

/// `text` with every credential the rules find replaced by `[redacted: RULE]`, and the findings
/// (one per rule). A transcript is redacted this way before any of it reaches a model or an
/// excerpt (`import sessions`): unlike a save, which refuses such a text, an import keeps the rest
/// of the turn. The secret itself (a rule's first group, else its whole match) is what goes; a
/// text the rules still find something in after a few passes is replaced whole.
pub fn redact(text: &str) -> (String, Vec<Finding>) {
    let mut found: Vec<Finding> = Vec::new();
    let mut out = text.to_string();
    for _ in 0..REDACT_PASSES {
        let spans = secret_spans(&out);
        if spans.is_empty() {
            return (out, found);
        }
        let mut next = String::with_capacity(out.len());
        let mut at = 0;
        for (start, end, rule) in spans {
            if start < at {
                continue;
            }
            next.push_str(&out[at..start]);
            next.push_str(&format!("[redacted: {}]", rule.id));
            at = end;
            if !found.iter().any(|f| f.rule == rule.id) {
                found.push(Finding { rule: rule.id, description: rule.description });
            }
        }
        next.push_str(&out[at..]);
        out = next;
    }
    if scan(&out).is_empty() {
        return (out, found);
    }
    let rules = found.iter().map(|f| f.rule).collect::<Vec<_>>().join(", ");
    (format!("[redacted: {rules}]"), found)
}

/// How many times [`redact`] looks again after replacing what it found.
const REDACT_PASSES: usize = 3;

/// Where the credentials of `text` are: (start, end, rule) of each secret, by start.
fn secret_spans(text: &str) -> Vec<(usize, usize, &'static Rule)> {
    let detector = detector();
    let mut wanted = vec![false; RULES.len()];
    for m in detector.keywords.find_overlapping_iter(text) {
        wanted[detector.keyword_rule[m.pattern().as_usize()]] = true;
    }
    let mut spans = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        if !wanted[i] {
            continue;
        }
        for c in detector.rules[i].captures_iter(text) {
            let Some(secret) = c.get(1).or_else(|| c.get(0)) else { continue };
            if is_secret(rule, secret.as_str()) {
                spans.push((secret.start(), secret.end(), rule));
            }
        }
    }
    spans.sort_by_key(|(start, end, _)| (*start, std::cmp::Reverse(*end)));
    spans
}

/// Whether a match's secret passes its rule's entropy floor and is no placeholder.
fn is_secret(rule: &Rule, secret: &str) -> bool {
    let floor = match rule.check {
        Check::Format => return true,
        Check::NotPlaceholder => return !is_placeholder(secret),
        Check::Entropy(floor) => floor,
    };
    let lower = secret.to_ascii_lowercase();
    if STOPWORDS.iter().any(|w| lower.starts_with(w)) || is_placeholder(secret) {
        return false;
    }
    shannon_entropy(secret) >= floor
}

/// A value that stands for a secret without being one: a variable (`${X}`, `$X`, `%(x)s`,
/// `{{x}}`), an angle-bracketed name, or a run of one masking character (`****`, `xxxx`).
fn is_placeholder(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'' || c == '`');
    if v.starts_with('$') || v.starts_with("{{") || v.starts_with('<') || v.starts_with("%(") || v.starts_with('%') {
        return true;
    }
    let mut chars = v.chars();
    match chars.next() {
        Some(first) => matches!(first, '*' | 'x' | 'X' | '.' | '•') && chars.all(|c| c == first),
        None => true,
    }
}

/// Shannon entropy of `s` in bits per character.
fn shannon_entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut n = 0u32;
    for b in s.bytes() {
        counts[b as usize] += 1;
        n += 1;
    }
    let n = f64::from(n.max(1));
    counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / n).map(|p| -p * p.log2()).sum()
}

#[cfg(test)]
mod tests {
    use super::{RULES, Regex, scan};

    /// A sample put together from parts, so no whole credential-shaped string sits in the
    /// source for a scanner of this repository to find.
    fn s(parts: &[&str]) -> String {
        parts.concat()
    }

    #[test]
    fn every_rule_compiles_and_has_keywords() {
        for rule in RULES {
            Regex::new(rule.pattern).unwrap();
            assert!(!rule.keywords.is_empty(), "{}", rule.id);
            assert!(rule.keywords.iter().all(|k| *k == k.to_ascii_lowercase()), "{}: lower-case keywords", rule.id);
        }
    }

    #[test]
    fn credential_samples_are_found_by_their_rule() {
        let b64 = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ9876543210AbCd";
        let hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let samples: Vec<(String, &str)> = vec![
            (s(&["the deploy key is AKIA", "IOSFODNN7EXAMPLE"]), "aws-access-token"),
            (s(&["ASIA", "Y34FZKBOKMUTVV7A in the session"]), "aws-access-token"),
            (s(&["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"]), "aws-secret-access-key"),
            (s(&["token ghp_", "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"]), "github-token"),
            (s(&["gho_", "16C7e42F292c6912E7710c838347Ae178B4a"]), "github-token"),
            (s(&["ghs_", "16C7e42F292c6912E7710c838347Ae178B4a"]), "github-token"),
            (s(&["github_pat_", "11ABCDEFG0123456789ab_", &"Zx9".repeat(20)]), "github-fine-grained-pat"),
            (s(&["glpat-", "xxxxXXXX1234yyyyZZZZ"]), "gitlab-token"),
            (s(&["xoxb-", "2631234567890-2612345678901-Fw3Z4RdAbCdEfGhIjKlMnOpQ"]), "slack-token"),
            (s(&["xoxp-", "1234567890-1234567890-1234567890-0123456789abcdef0123456789abcdef"]), "slack-token"),
            (
                s(&["https://hooks.slack.com/services/", "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"]),
                "slack-webhook-url",
            ),
            (s(&["sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"]), "stripe-access-token"),
            (s(&["rk_live_", "4eC39HqLyjWDarjtT1zdp7dc"]), "stripe-access-token"),
            (s(&["sk-", "abcdefghij0123456789", "T3Blbk", "FJ", "abcdefghij0123456789"]), "openai-api-key"),
            (s(&["OPENAI_API_KEY is sk-proj-", b64]), "openai-api-key"),
            (s(&["sk-ant-", "api03-", b64, "xyzAA"]), "anthropic-api-key"),
            (s(&["AIza", "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"]), "gcp-api-key"),
            (s(&["SG.", "ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"]), "sendgrid-api-token"),
            (s(&["SK", "0123456789abcdef0123456789abcdef"]), "twilio-api-key"),
            (s(&["npm_", "abcdefghijklmnopqrstuvwxyz0123456789"]), "npm-access-token"),
            (s(&["pypi-AgEIcHlwaS5vcmc", b64]), "pypi-upload-token"),
            (s(&["hf_", "abcdefghijklmnopqrstuvwxyzABCDEFGH"]), "huggingface-access-token"),
            (s(&["shpat_", "0123456789abcdef0123456789abcdef"]), "shopify-token"),
            (s(&["dop_v1_", hex64]), "digitalocean-token"),
            (
                s(&["-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA", b64, "\n-----END RSA PRIVATE KEY-----"]),
                "private-key",
            ),
            (
                s(&["-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", b64]),
                "private-key",
            ),
            (
                s(&[
                    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
                    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
                    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
                ]),
                "jwt",
            ),
            (s(&["Authorization: Bearer ", "mF_9.B5f-4.1JqM7hZxQ2pLr8Vt3Kw"]), "bearer-token"),
            (s(&["Authorization: Basic ", "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="]), "basic-auth-header"),
            (s(&["the db is postgres://app:", "pass@db.internal:5432/app"]), "password-in-url"),
            (s(&["mongodb+srv://admin:", "S3cr3tP4ss@cluster0.example.net/prod"]), "password-in-url"),
            (s(&["Server=db1;Database=app;User Id=sa;", "Password=Tr0ub4dor&3;"]), "password-in-connection-string"),
            (s(&["API_KEY=", "f8Kq2Lm9Zx4Rt7Vb1Nw6"]), "generic-api-key"),
            (s(&["client_secret: \"", "9yQ2mW8xK3pL7vR4tZ1n\""]), "generic-api-key"),
        ];
        for (text, rule) in &samples {
            let found = scan(text);
            assert!(
                found.iter().any(|f| f.rule == *rule),
                "{rule} should find a credential in a sample; found {found:?}"
            );
        }
    }

    #[test]
    fn redaction_replaces_the_secret_and_keeps_the_rest() {
        let text =
            s(&["deploy with AKIA", "IOSFODNN7EXAMPLE and the db postgres://app:", "pass@db.internal/app today"]);
        let (redacted, found) = super::redact(&text);
        assert!(scan(&redacted).is_empty(), "{redacted}");
        assert!(redacted.starts_with("deploy with [redacted: aws-access-token] and the db"), "{redacted}");
        assert!(redacted.ends_with("today"), "{redacted}");
        assert!(!redacted.contains("IOSFODNN7"), "{redacted}");
        let rules: Vec<&str> = found.iter().map(|f| f.rule).collect();
        assert!(rules.contains(&"aws-access-token") && rules.contains(&"password-in-url"), "{rules:?}");
        assert_eq!(super::redact("nothing to hide here"), ("nothing to hide here".to_string(), Vec::new()));
    }

    #[test]
    fn look_alikes_are_not_credentials() {
        let texts = [
            "fixed in 3f2c9a1e8b7d6c5a4f3e2d1c0b9a8f7e6d5c4b3a, see the PR",
            "commit 3f2c9a1 reverted the cache change",
            "the request id was 123e4567-e89b-12d3-a456-426614174000",
            "upgraded to tokio 1.43.0 and rustc 1.95.0-nightly (2026-11-30)",
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 is the image digest",
            "the digest is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "base64 of hello is aGVsbG8= and of world is d29ybGQ=",
            "the docs are at https://docs.example.com/guide?page=2#install",
            "clone it with git@github.com:org/repo.git or https://user@github.com/org/repo",
            "my password manager is 1Password",
            "rotate the password every 90 days; the key vault holds it",
            "bearer tokens expire after an hour",
            "the API key is in the vault under payments/stripe",
            "password: ${DB_PASSWORD}",
            "postgres://app:${PGPASSWORD}@db.internal/app",
            "token = <your token here>",
            "the monkey: something happened",
            "Authorization header uses Basic auth over TLS",
            "-----BEGIN PUBLIC KEY----- is the header of a public key",
            "ask Skyler about the skeleton keys",
            "prefers pnpm over npm; npm_config_cache lives in ~/.npm",
        ];
        for text in texts {
            assert!(scan(text).is_empty(), "{text:?} is not a credential; found {:?}", scan(text));
        }
    }
}
