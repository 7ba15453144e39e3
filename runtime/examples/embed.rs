//! Posthorn embedded in an application: the memory store, a transport of our own, one
//! templated email sent and delivered, no server and no JSON. Run it with
//! `cargo run -p posthorn-runtime --example embed`.

use async_trait::async_trait;
use posthorn_runtime::prelude::*;
use tokio::sync::Mutex;

/// Our transport: keeps every message it is handed.
#[derive(Default)]
struct Outbox(Mutex<Vec<OutgoingMessage>>);

#[async_trait]
impl MailTransport for Outbox {
    async fn send(&self, message: &OutgoingMessage) -> Result<String, TransportError> {
        self.0.lock().await.push(message.clone());
        Ok(message.message_id.clone())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = std::sync::Arc::new(posthorn_memory::MemoryStore::new());
    let outbox = std::sync::Arc::new(Outbox::default());
    let engine = Engine::builder().store(store.clone()).jobs(store);
    let engine = engine.transport(outbox.clone()).build()?;

    // A workspace with a verified sender domain, acting with its secret key.
    let (workspace, keys) = engine
        .create_workspace(CreateWorkspace::named("Acme"))
        .await?;
    let domain = AddDomain::verified("acme.test");
    engine.admin_add_domain(&workspace.id, domain).await?;
    let acme = Caller::with_secret_key(workspace, keys.record);

    let subject = "Welcome aboard, {{name}}";
    let body = "<p>Hello {{name}}, glad you are here.</p>";
    let mut welcome = CreateTemplate::new("Welcome", subject, body, TemplateType::Transactional);
    welcome.from = Some(EmailAddress::parse("hello@acme.test")?);
    let template = engine.create_template(&acme, welcome).await?;

    let mut send = SendEmail::to(EmailAddress::parse("ada@example.org")?);
    send.template = Some(template.id);
    send.data.insert("name".into(), "Ada".into());
    engine.send(&acme, send).await?;
    // Run the jobs (here: the delivery) until the queue is empty.
    engine.run_due_jobs().await?;

    // Prints "Welcome aboard, Ada -> ada@example.org".
    for m in outbox.0.lock().await.iter() {
        println!("{} -> {}", m.subject, m.to.email);
    }
    Ok(())
}
