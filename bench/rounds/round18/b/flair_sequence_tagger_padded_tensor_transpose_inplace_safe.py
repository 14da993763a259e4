# label: safe
# why: transpose_ only swaps the axes of the zero-padded buffer that was just filled slice by slice; nothing saved that buffer before the metadata change, so the tagger's gradients are unaffected
# source: https://github.com/flairNLP/flair/commit/e5315dad7173eef988f8b61df1e2947d7e9b5f20
from typing import List

import torch
import torch.nn as nn

torch.manual_seed(0)


class Token:
    def __init__(self, idx, tag):
        self.idx, self.tag = idx, tag
        self._embedding = None

    def set_embedding(self, emb):
        self._embedding = emb

    def get_embedding(self):
        return self._embedding


class Sentence:
    def __init__(self, ids, tags):
        self.tokens = [Token(i, t) for i, t in zip(ids, tags)]

    def __len__(self):
        return len(self.tokens)

    def __iter__(self):
        return iter(self.tokens)


class WordEmbeddings(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.embedding_length = dim

    def embed(self, sentences):
        for sentence in sentences:
            ids = torch.tensor([t.idx for t in sentence])
            embs = self.embedding(ids)
            for token, emb in zip(sentence, embs):
                token.set_embedding(emb)


class LockedDropout(nn.Module):
    def __init__(self, dropout_rate=0.5):
        super().__init__()
        self.dropout_rate = dropout_rate

    def forward(self, x):
        if not self.training or not self.dropout_rate:
            return x
        m = x.new_empty(1, x.size(1), x.size(2)).bernoulli_(1 - self.dropout_rate)
        mask = m / (1 - self.dropout_rate)
        return mask.expand_as(x) * x


class SequenceTagger(nn.Module):
    def __init__(self, embeddings, hidden_size, tagset_size):
        super().__init__()
        self.embeddings = embeddings
        self.use_locked_dropout = 0.5
        self.locked_dropout = LockedDropout(0.5)
        self.embedding2nn = nn.Linear(embeddings.embedding_length, embeddings.embedding_length)
        self.rnn = nn.LSTM(embeddings.embedding_length, hidden_size, bidirectional=True)
        self.linear = nn.Linear(hidden_size * 2, tagset_size)

    def forward(self, sentences: List[Sentence]):
        self.zero_grad()
        self.embeddings.embed(sentences)
        lengths: List[int] = [len(sentence.tokens) for sentence in sentences]
        longest_token_sequence_in_batch: int = max(lengths)

        # initialize zero-padded word embeddings tensor
        sentence_tensor = torch.zeros([len(sentences), longest_token_sequence_in_batch, self.embeddings.embedding_length], dtype=torch.float)
        for s_id, sentence in enumerate(sentences):
            # fill values with word embeddings
            sentence_tensor[s_id][: len(sentence)] = torch.cat([token.get_embedding().unsqueeze(0) for token in sentence], 0)

        # TODO: this can only be removed once the implementations of word_dropout and locked_dropout have a batch_first mode
        sentence_tensor = sentence_tensor.transpose_(0, 1)

        if self.use_locked_dropout > 0.0:
            sentence_tensor = self.locked_dropout(sentence_tensor)
        sentence_tensor = self.embedding2nn(sentence_tensor)

        packed = torch.nn.utils.rnn.pack_padded_sequence(sentence_tensor, lengths, enforce_sorted=False)
        rnn_output, hidden = self.rnn(packed)
        sentence_tensor, output_lengths = torch.nn.utils.rnn.pad_packed_sequence(rnn_output, batch_first=True)
        return self.linear(sentence_tensor)

    def forward_loss(self, sentences):
        features = self.forward(sentences)
        losses = []
        for s_id, sentence in enumerate(sentences):
            tags = torch.tensor([t.tag for t in sentence])
            losses.append(nn.functional.cross_entropy(features[s_id][: len(sentence)], tags))
        return sum(losses) / len(losses)


tagger = SequenceTagger(WordEmbeddings(30, 8), hidden_size=6, tagset_size=4)
tagger.train()
sentences = [Sentence([3, 7, 2, 9], [0, 1, 2, 3]), Sentence([5, 1], [1, 1]), Sentence([8, 8, 4], [2, 0, 3])]
loss = tagger.forward_loss(sentences)
loss.backward()
