# label: safe no-twin
# why: the fix wraps the assignment in torch.no_grad(), so writing the learned vector into the embedding row is an ordinary parameter update that autograd does not record and no graph depends on yet.
# source: https://github.com/google/inspiration_tree/issues/25
import torch
import torch.nn as nn

torch.manual_seed(0)


class CLIPTokenizer:
    def __init__(self, vocab):
        self.vocab = dict((t, i) for i, t in enumerate(vocab))

    def add_tokens(self, tokens):
        n = 0
        for t in tokens:
            if t not in self.vocab:
                self.vocab[t] = len(self.vocab)
                n += 1
        return n

    def tokenize(self, text):
        return [text]

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[t] for t in tokens]

    def __len__(self):
        return len(self.vocab)


class CLIPTextEmbeddings(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, dim)


class CLIPTextTransformer(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embeddings = CLIPTextEmbeddings(vocab_size, dim)


class CLIPTextModel(nn.Module):
    def __init__(self, vocab_size=6, dim=8):
        super().__init__()
        self.text_model = CLIPTextTransformer(vocab_size, dim)

    def resize_token_embeddings(self, new_num_tokens):
        old = self.text_model.embeddings.token_embedding
        new = nn.Embedding(new_num_tokens, old.embedding_dim)
        with torch.no_grad():
            new.weight[: old.num_embeddings] = old.weight
        self.text_model.embeddings.token_embedding = new


class StableDiffusionPipeline:
    def __init__(self):
        self.tokenizer = CLIPTokenizer(["a", "photo", "of", "cat", "dog", "<pad>"])
        self.text_encoder = CLIPTextModel()


def load_tokens(pipe, data, device):
    """
    Adds the new learned tokens into the predefined dictionary of pipe.
    """
    added_tokens = []
    for t_ in data.keys():
        added_tokens.append(t_)
    num_added_tokens = pipe.tokenizer.add_tokens(added_tokens)
    pipe.text_encoder.resize_token_embeddings(len(pipe.tokenizer))
    for token_ in data.keys():
        ref_token = pipe.tokenizer.tokenize(token_)
        ref_indx = pipe.tokenizer.convert_tokens_to_ids(ref_token)[0]
        embd_cur = data[token_].to(device).to(dtype=torch.float32)
        with torch.no_grad():
            token_embeds = pipe.text_encoder.text_model.embeddings.token_embedding.weight
            token_embeds[ref_indx] = embd_cur


def main():
    device = "cpu"
    pipe = StableDiffusionPipeline()
    data = {"<*>": torch.randn(8), "<&>": torch.randn(8)}
    load_tokens(pipe, data, device)
    ids = torch.tensor(pipe.tokenizer.convert_tokens_to_ids(["a", "photo", "of", "<*>"]))
    emb = pipe.text_encoder.text_model.embeddings.token_embedding(ids)
    print(emb.sum().item())
    return emb


emb = main()
