use std::time::Instant;
use posthorn_core::model::{Contact, EmailAddress, Workspace};
use posthorn_core::ports::{ChangeSet, ContactQuery, Store, Write};
use posthorn_memory::MemoryStore;

#[tokio::test]
#[ignore]
async fn scale() {
    let store = MemoryStore::new();
    let now = chrono::Utc::now();
    let ws = Workspace::new("w".into(), now);
    store.commit(ChangeSet { writes: vec![Write::PutWorkspace(ws.clone())] }).await.unwrap();
    let t = Instant::now();
    let mut last = None;
    for chunk in 0..1000 {
        let writes = (0..1000).map(|i| {
            let e = EmailAddress::parse(&format!("user{}-{}@example.com", chunk, i)).unwrap();
            Write::InsertContact(Contact::new(&ws.id, e, i % 2 == 0, Default::default(), false, now))
        }).collect();
        store.commit(ChangeSet { writes }).await.unwrap();
    }
    println!("insert 1M: {:?}", t.elapsed());
    let t = Instant::now();
    for _ in 0..1000 {
        let q = ContactQuery { limit: 50, before_id: last.clone(), subscribed: Some(true), ..Default::default() };
        let p = store.contacts(&ws.id, &q).await.unwrap();
        last = p.contacts.last().map(|c| c.id.clone());
    }
    println!("1000 pages: {:?}", t.elapsed());
    let t = Instant::now();
    for i in 0..10000 {
        store.contact_by_email(&ws.id, &format!("user{}-{}@example.com", i % 1000, i)).await.unwrap();
    }
    println!("10k by email: {:?}", t.elapsed());
    let t = Instant::now();
    let n = store.count_contacts(&ws.id, &ContactQuery::default()).await.unwrap();
    let s = store.count_contacts(&ws.id, &ContactQuery { subscribed: Some(false), ..Default::default() }).await.unwrap();
    println!("counts {n} {s}: {:?}", t.elapsed());
    let t = Instant::now();
    let q = ContactQuery { limit: 50, search: Some("user999-99".into()), ..Default::default() };
    let p = store.contacts(&ws.id, &q).await.unwrap();
    let c = store.count_contacts(&ws.id, &q).await.unwrap();
    println!("search {} {}: {:?}", p.contacts.len(), c, t.elapsed());
    let t = Instant::now();
    for i in 0..10000 {
        let e = EmailAddress::parse(&format!("single{i}@example.com")).unwrap();
        store.commit(ChangeSet { writes: vec![Write::InsertContact(Contact::new(&ws.id, e, true, Default::default(), false, now))] }).await.unwrap();
    }
    println!("10k single commits: {:?}", t.elapsed());
}
