# label: hazard raises
# why: with a single-scene batch the permuted lane_node_enc folds to a plain view, so the GAT projections save a view of lane_node_enc for backward, and lane_node_enc += gat_layer(...) then overwrites it in place.
# source: https://github.com/nachiket92/PGP/issues/19
import torch
import torch.nn as nn

torch.manual_seed(0)


class GAT(nn.Module):
    """Scaled dot-product attention over lane-graph neighbours."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.query_emb = nn.Linear(in_channels, out_channels)
        self.key_emb = nn.Linear(in_channels, out_channels)
        self.val_emb = nn.Linear(in_channels, out_channels)
        self.att = nn.MultiheadAttention(out_channels, 1)

    def forward(self, node_encodings, adj_mat):
        queries = self.query_emb(node_encodings.permute(1, 0, 2))
        keys = self.key_emb(node_encodings.permute(1, 0, 2))
        vals = self.val_emb(node_encodings.permute(1, 0, 2))
        att_op, _ = self.att(queries, keys, vals, attn_mask=~adj_mat)
        return att_op.permute(1, 0, 2)


class PGPEncoder(nn.Module):
    def __init__(self, node_feat_size, nbr_feat_size, enc_size, num_gat_layers=2):
        super().__init__()
        self.node_emb = nn.Linear(node_feat_size, enc_size)
        self.node_encoder = nn.GRU(enc_size, enc_size, batch_first=True)
        self.nbr_emb = nn.Linear(nbr_feat_size, enc_size)
        self.nbr_enc = nn.GRU(enc_size, enc_size, batch_first=True)
        self.query_emb = nn.Linear(enc_size, enc_size)
        self.key_emb = nn.Linear(enc_size, enc_size)
        self.val_emb = nn.Linear(enc_size, enc_size)
        self.a_n_att = nn.MultiheadAttention(enc_size, num_heads=1)
        self.mix = nn.Linear(enc_size * 2, enc_size)
        self.leaky_relu = nn.LeakyReLU()
        self.gat = nn.ModuleList([GAT(enc_size, enc_size) for _ in range(num_gat_layers)])

    def gru_encode(self, feats, gru):
        b, n, t, f = feats.shape
        _, h = gru(feats.reshape(b * n, t, f))
        return h.squeeze(0).view(b, n, -1)

    def forward(self, lane_node_feats, nbr_feats, adj_mat):
        lane_node_embedding = self.leaky_relu(self.node_emb(lane_node_feats))
        lane_node_enc = self.gru_encode(lane_node_embedding, self.node_encoder)
        nbr_embedding = self.leaky_relu(self.nbr_emb(nbr_feats))
        nbr_encodings = self.gru_encode(nbr_embedding, self.nbr_enc)

        queries = self.query_emb(lane_node_enc).permute(1, 0, 2)
        keys = self.key_emb(nbr_encodings).permute(1, 0, 2)
        vals = self.val_emb(nbr_encodings).permute(1, 0, 2)
        att_op, _ = self.a_n_att(queries, keys, vals)
        att_op = att_op.permute(1, 0, 2)

        lane_node_enc = self.leaky_relu(self.mix(torch.cat((lane_node_enc, att_op), dim=2)))

        for gat_layer in self.gat:
            lane_node_enc += gat_layer(lane_node_enc, adj_mat)  # <-- IPL001: the GAT layer saved views of lane_node_enc
        return lane_node_enc


batch_size, max_nodes, max_poses, max_nbrs, t_h = 1, 6, 5, 3, 4  # one scene per step
encoder = PGPEncoder(node_feat_size=6, nbr_feat_size=5, enc_size=8)
pi_head = nn.Linear(8, 1)

lane_node_feats = torch.randn(batch_size, max_nodes, max_poses, 6)
nbr_feats = torch.randn(batch_size, max_nbrs, t_h, 5)
adj_mat = torch.eye(max_nodes, dtype=torch.bool) | (torch.rand(max_nodes, max_nodes) > 0.5)
init_node = torch.randint(0, max_nodes, (batch_size,))

node_enc = encoder(lane_node_feats, nbr_feats, adj_mat)
logits = pi_head(node_enc).squeeze(-1)
loss = nn.functional.cross_entropy(logits, init_node)
loss.backward()
