//! The one table from a use case's refusal to an SMTP reply: what `/v1/send` refuses for
//! good is 5xx with the reason; what may pass later (limits, an unavailable backend) is 4xx,
//! so the client keeps the message and retries.

use posthorn_core::Error;

use super::reply::Reply;
use crate::http::error::ApiError;

/// The reply for a refused or failed use case.
pub fn from_error(error: &Error) -> Reply {
    match error {
        Error::Validation(fields) => {
            let reasons: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.field, f.message))
                .collect();
            Reply::new(
                554,
                [5, 6, 0],
                format!("Message refused: {}", reasons.join("; ")),
            )
        }
        Error::BadRequest(reason) | Error::InvalidState(reason) => {
            Reply::new(554, [5, 6, 0], format!("Message refused: {reason}"))
        }
        Error::StepKindMismatch { .. } => {
            Reply::new(554, [5, 6, 0], format!("Message refused: {error}"))
        }
        Error::NotFound(resource) => Reply::new(
            554,
            [5, 6, 0],
            format!("Message refused: {} not found", resource.noun()),
        ),
        Error::RateLimited {
            message,
            retry_after_secs,
        } => Reply::new(
            451,
            [4, 7, 1],
            format!("{message}; try again in {retry_after_secs} s"),
        ),
        Error::DomainNotVerified(reason) | Error::Forbidden(reason) => {
            Reply::new(550, [5, 7, 1], reason)
        }
        Error::Conflict(_) | Error::Unavailable(_) | Error::Internal(_) => {
            // Nothing was committed: the client keeps the message and tries again.
            tracing::warn!(error = %error, "SMTP message not accepted");
            Reply::try_later()
        }
    }
}

/// The reply for a key that failed authentication (at AUTH, or re-checked per message).
pub fn from_auth(error: &ApiError) -> Reply {
    match error {
        ApiError::ProjectDisabled => Reply::new(535, [5, 7, 8], "This workspace is disabled"),
        ApiError::SecretKeyRequired => Reply::new(
            535,
            [5, 7, 8],
            "Authentication failed: the password must be a secret key (sk_...)",
        ),
        ApiError::Domain(e) => {
            tracing::warn!(error = %e, "SMTP authentication could not reach the store");
            Reply::new(
                454,
                [4, 7, 0],
                "Temporary authentication failure, try again later",
            )
        }
        _ => Reply::new(
            535,
            [5, 7, 8],
            "Authentication failed: the password must be a secret API key of the workspace",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use posthorn_core::FieldError;

    #[test]
    fn permanent_refusals_are_5xx_and_passing_ones_4xx() {
        let validation = Error::Validation(vec![FieldError::new("to", "too_many", "many")]);
        assert_eq!(from_error(&validation).code, 554);
        assert_eq!(from_error(&Error::Forbidden("scope".into())).code, 550);
        assert_eq!(from_error(&Error::DomainNotVerified("d".into())).code, 550);
        assert_eq!(from_error(&Error::Unavailable("db".into())).code, 451);
        assert_eq!(from_error(&Error::Internal("bug".into())).code, 451);
        assert_eq!(from_auth(&ApiError::InvalidApiKey).code, 535);
        assert_eq!(
            from_auth(&ApiError::Domain(Error::Unavailable("db".into()))).code,
            454
        );
    }
}
