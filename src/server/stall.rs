//! A connection whose writes may not stall for ever: [`StallLimit`] wraps a stream and fails a write
//! (or flush) that has waited longer than its limit for the peer to read.
//!
//! hyper bounds how long a request's headers may take to arrive, not how long a reply may wait to be
//! read: a client that sends requests and never reads the replies would hold its connection, and one
//! of the server's limited places, for as long as it liked.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// A stream whose writes fail once one has waited `limit` for the peer.
pub(crate) struct StallLimit<S> {
    inner: S,
    limit: Duration,
    /// Armed while a write waits: when it rings, the write fails.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> StallLimit<S> {
    /// `inner`, whose writes may wait at most `limit` each.
    pub(crate) fn new(inner: S, limit: Duration) -> StallLimit<S> {
        StallLimit {
            inner,
            limit,
            stalled: None,
        }
    }

    /// What a write that returned `poll` means: progress disarms the timer, waiting arms it, and
    /// waiting past the limit is an error.
    fn watch<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the peer read nothing for {limit:?}"),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StallLimit<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StallLimit<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(cx, poll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A peer that never reads: once the pipe is full, the write fails after the limit instead of
    /// waiting for ever (the outer timeout only turns a hang into a failure).
    #[test]
    fn a_write_nobody_reads_fails_after_the_limit() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (near, _far) = tokio::io::duplex(64);
            let mut stream = StallLimit::new(near, Duration::from_millis(100));
            let written =
                tokio::time::timeout(Duration::from_secs(60), stream.write_all(&[0u8; 1024]))
                    .await
                    .expect("the write waited for ever");
            let e = written.expect_err("nobody read, yet the write succeeded");
            assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        });
    }

    /// A peer that reads, however slowly between writes, is served: each write that progresses
    /// starts the limit again.
    #[test]
    fn a_peer_that_reads_is_served() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            use tokio::io::AsyncReadExt;
            let (near, mut far) = tokio::io::duplex(64);
            let mut stream = StallLimit::new(near, Duration::from_secs(30));
            let reader = async {
                let mut got = Vec::new();
                far.read_to_end(&mut got).await.map(|_| got.len())
            };
            let writer = async {
                stream.write_all(&[1u8; 4096]).await?;
                stream.shutdown().await
            };
            let (read, written) = tokio::join!(reader, writer);
            written.unwrap();
            assert_eq!(read.unwrap(), 4096);
        });
    }
}
