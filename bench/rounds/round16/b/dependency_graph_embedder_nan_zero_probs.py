# label: hazard raises
# why: the nan-to-zero index assignments write into the parser's sigmoid/softmax outputs, which their backward nodes saved, so fine-tuning the parser through the embedder fails
# source: https://github.com/matanhasson/qdecomp_with_dependency_graphs (file qdecomp_nlp/modules/token_embedders/dependencies_graph_embedder.py @ 8666be0dc2b1a51657d2165086eeff7324dc629c; fix left commented out: "avoid in-place modifications for backprop")
import torch
import torch.nn as nn

torch.manual_seed(0)


class GraphParser(nn.Module):
    def __init__(self, vocab_size, dim, n_tags):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.head_arc_feedforward = nn.Linear(dim, dim)
        self.child_arc_feedforward = nn.Linear(dim, dim)
        self.arc_attention = nn.Bilinear(dim, dim, 1)
        self.tag_bilinear = nn.Bilinear(dim, dim, n_tags)

    def forward(self, tokens):
        encoded, _ = self.encoder(self.embed(tokens))
        n = encoded.size(1)
        head = self.head_arc_feedforward(encoded).unsqueeze(2).expand(-1, -1, n, -1).contiguous()
        child = self.child_arc_feedforward(encoded).unsqueeze(1).expand(-1, n, -1, -1).contiguous()
        arc_scores = self.arc_attention(head, child).squeeze(-1)
        arc_probs = torch.sigmoid(arc_scores)
        arc_tag_probs = torch.softmax(self.tag_bilinear(head, child), dim=-1)
        return {"arc_probs": arc_probs, "arc_tag_probs": arc_tag_probs, "encoder": encoded}


class DependenciesGraphTokenEmbedder(nn.Module):
    def __init__(self, model, arc_tags_embedding_dim, n_tags):
        super().__init__()
        self._model = model
        self._arc_tags_embedder = nn.Embedding(n_tags, arc_tags_embedding_dim)
        self._arc_tags_number = n_tags

    def forward(self, tokens, original_sequence_mask):
        output_dict = self._model.forward(tokens)
        encodings = output_dict["encoder"]

        arc_probs = output_dict["arc_probs"]
        arc_tags_probs = output_dict["arc_tag_probs"]

        # nan to zero (avoid nan-loss)
        arc_probs[arc_probs.isnan()] = 0  # <-- IPL001: sigmoid output saved by SigmoidBackward overwritten in place
        arc_tags_probs[arc_tags_probs.isnan()] = 0  # <-- IPL001: softmax output saved by SoftmaxBackward overwritten in place

        embeddings = self._weighted_neighbors_embeddings(encodings, arc_probs, arc_tags_probs)
        max_length = original_sequence_mask.sum(-1).max()
        return embeddings[:, :max_length, :] * original_sequence_mask.unsqueeze(-1)

    def _weighted_neighbors_embeddings(self, encodings, arc_probs, arc_tags_probs):
        batch_size, nodes_num, *_ = arc_probs.size()
        tags_embeddings = self._arc_tags_embedder(torch.arange(0, self._arc_tags_number, dtype=torch.long))
        arc_tags_embeddings = arc_tags_probs.matmul(tags_embeddings)
        expanded_head_encodings = encodings.unsqueeze(dim=2).expand(-1, -1, nodes_num, -1)
        expanded_child_encodings = encodings.unsqueeze(dim=1).expand(-1, nodes_num, -1, -1)
        in_arc_tag_embeddings = torch.cat([expanded_head_encodings, arc_tags_embeddings], dim=-1)
        in_embeddings = (arc_probs.unsqueeze(-1) * in_arc_tag_embeddings).transpose(1, 2).sum(dim=-2)
        out_arc_tag_embeddings = torch.cat([expanded_child_encodings, arc_tags_embeddings], dim=-1)
        out_embeddings = (arc_probs.unsqueeze(-1) * out_arc_tag_embeddings).sum(dim=-2)
        return torch.cat([encodings, in_embeddings, out_embeddings], dim=-1)


parser = GraphParser(vocab_size=10, dim=4, n_tags=3)
embedder = DependenciesGraphTokenEmbedder(parser, arc_tags_embedding_dim=2, n_tags=3)
tokens = torch.tensor([[1, 4, 2, 7], [3, 3, 5, 0]])
mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.bool)
emb = embedder(tokens, mask)
loss = emb.pow(2).mean()
loss.backward()
