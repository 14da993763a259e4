# label: safe
# why: the commit builds the fake interactions from `pos_emb.clone().view(-1, pos_emb.size(2))`, so writing the sampled rows touches a copy and the tanh output saved for backward (and fed to the generator) stays intact; `fake_inputs[non_pad_mask] = updates` also writes into a clone of the labels.
# source: https://github.com/NVIDIA-Merlin/Transformers4Rec/commit/c7ab6d74e6a6ac7db2a71e1d86c071a2b94ef80c
import torch
import torch.nn as nn

torch.manual_seed(0)


class ProjectionNetwork(nn.Module):
    """
    Project item interaction embeddings into model's hidden size
    """

    def __init__(self, input_dim, output_dim, inp_merge, layer_norm_all_features, input_dropout, tf_out_act):
        super().__init__()
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.inp_merge = inp_merge
        self.layer_norm_all_features = layer_norm_all_features
        self.tf_out_act = tf_out_act
        self.input_dropout = nn.Dropout(input_dropout)
        if self.layer_norm_all_features:
            self.layer_norm_all_input = nn.LayerNorm(normalized_shape=self.input_dim)
        if self.inp_merge == "mlp":
            self.merge = nn.Linear(self.input_dim, output_dim)
        elif self.inp_merge == "identity":
            self.merge = nn.Identity()
        else:
            raise NotImplementedError

    def forward(self, inp):
        if self.inp_merge == "mlp" and self.layer_norm_all_features:
            return self.tf_out_act(self.merge(self.layer_norm_all_input(self.input_dropout(inp))))
        elif self.inp_merge == "mlp":
            return self.tf_out_act(self.merge(self.input_dropout(inp)))
        return self.merge(inp)


class TinyEncoder(nn.Module):
    """Stand-in for the HF transformer: returns a tuple whose first item is the hidden states."""

    def __init__(self, d_model):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, num_heads=2, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))
        self.ln = nn.LayerNorm(d_model)

    def forward(self, inputs_embeds):
        h, _ = self.attn(inputs_embeds, inputs_embeds, inputs_embeds)
        h = self.ln(inputs_embeds + h)
        return (h + self.ff(h),)


class RecSysTask:
    def get_fake_data(self, label_seq, trg_flat, logits, sample_from_batch):
        """Sample replacement items from the generator's distribution over the batch items."""
        non_pad_mask = label_seq != 0
        probs = torch.softmax(logits.detach(), dim=-1)
        # index (into the flattened batch) of the item that replaces each non-padded position
        batch_updates = torch.multinomial(probs, 1).squeeze(-1)
        updates = trg_flat[batch_updates]
        fake_inputs = label_seq.clone()
        fake_inputs[non_pad_mask] = updates
        discriminator_labels = (fake_inputs != label_seq).long()
        return fake_inputs, discriminator_labels, batch_updates


class RecSysMetaModel(nn.Module):
    def __init__(self, n_items=30, d_model=16, rtd_use_batch_interaction=True):
        super().__init__()
        self.pad_token = 0
        self.embedding_tables = nn.Embedding(n_items, d_model, padding_idx=0)
        self.merge = ProjectionNetwork(d_model, d_model, "mlp", True, 0.0, torch.tanh)
        self.model = TinyEncoder(d_model)
        self.masked_item_embedding = nn.Parameter(torch.randn(d_model) * 0.01)
        self.output_layer = nn.Linear(d_model, n_items)
        self.dense_discriminator = nn.Linear(d_model, d_model)
        self.tf_out_act = torch.tanh
        self.discriminator_prediction = nn.Linear(d_model, 1)
        self.rtd = True
        self.rtd_sample_from_batch = True
        self.rtd_use_batch_interaction = rtd_use_batch_interaction
        self.rtd_tied_generator = True
        self.rtd_discriminator_loss_weight = 50.0
        self.rtd_generator_loss_weight = 1.0
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, label_seq):
        recsys_task = RecSysTask()
        # Step 1. features and targets (causal LM: predict the next item)
        pos_inp = self.embedding_tables(label_seq)
        label_seq_trg = torch.cat([label_seq[:, 1:], torch.zeros_like(label_seq[:, :1])], dim=1)
        mask_trg_pad = label_seq_trg != self.pad_token
        non_pad_mask = label_seq != self.pad_token

        # Step 2. Merge features
        pos_emb = self.merge(pos_inp)

        # Truncating the input sequences length to -1
        pos_emb_inp = pos_emb[:, :-1]
        pos_emb_inp = torch.cat(
            [pos_emb_inp, torch.zeros((pos_emb_inp.shape[0], 1, pos_emb_inp.shape[2]), dtype=pos_emb_inp.dtype)],
            axis=1,
        )
        # Replacing the inputs corresponding to masked label with a trainable embedding
        pos_emb_inp = torch.where(mask_trg_pad.unsqueeze(-1).bool(), pos_emb_inp, self.masked_item_embedding.to(pos_emb_inp.dtype))

        # Step3. Run forward pass on model architecture
        pos_emb_pred = self.model(inputs_embeds=pos_emb_inp)[0]
        trg_flat = label_seq_trg.flatten()
        non_pad_mask_flat = mask_trg_pad.flatten()
        labels_all = torch.masked_select(trg_flat, non_pad_mask_flat)
        logits_full = self.output_layer(pos_emb_pred.reshape(-1, pos_emb_pred.shape[-1]))
        logits_all = logits_full[non_pad_mask_flat]
        loss = self.loss_fn(logits_all, labels_all)

        if self.rtd and self.training:
            # Step 1. Generate fake data using genrator logits (sample items from the current batch)
            batch_items = label_seq.flatten()
            batch_logits = logits_full[non_pad_mask.flatten()][:, batch_items]
            batch_logits = batch_logits.masked_fill(batch_items.unsqueeze(0) == self.pad_token, float("-inf"))
            fake_inputs, discriminator_labels, batch_updates = recsys_task.get_fake_data(
                label_seq, batch_items, batch_logits, self.rtd_sample_from_batch
            )

            # Step 1.1 Build interaction embeddings using new replaced items
            if self.rtd_use_batch_interaction:
                # use processed interactions of the current batch
                replacement_interaction = pos_emb.view(-1, pos_emb.size(2))[batch_updates]
                fake_pos_emb = pos_emb.clone().view(-1, pos_emb.size(2))
                fake_pos_emb[non_pad_mask.flatten().nonzero().flatten(), :] = replacement_interaction
                fake_pos_emb = fake_pos_emb.view(pos_emb.shape)

            # Step 3. hidden representation of corrupted input (use the generator model for token classification)
            fake_pos_emb_pred = self.model(inputs_embeds=fake_pos_emb)[0]
            # step 4. get logits for binary pedictions
            fake_pos_emb_pred = self.dense_discriminator(fake_pos_emb_pred)
            fake_pos_emb_pred = self.tf_out_act(fake_pos_emb_pred)
            binary_logits = self.discriminator_prediction(fake_pos_emb_pred).squeeze(-1)
            # compute logits for non-padded items
            active_logits = binary_logits.view(-1, fake_pos_emb_pred.shape[1])[non_pad_mask]
            active_labels = discriminator_labels[non_pad_mask]
            discriminator_loss = nn.BCEWithLogitsLoss()(active_logits, active_labels.float())
            # Compute weighted joint training loss
            loss = (discriminator_loss * self.rtd_discriminator_loss_weight) + (loss * self.rtd_generator_loss_weight)

        return {"loss": loss, "labels": labels_all, "predictions": logits_all}


def main():
    model = RecSysMetaModel()
    model.train()
    label_seq = torch.randint(1, 30, (3, 7))
    label_seq[0, 5:] = 0  # padded session
    label_seq[2, 4:] = 0
    outputs = model(label_seq)
    outputs["loss"].backward()
    return outputs["loss"].detach(), model.merge.merge.weight.grad.clone(), model.embedding_tables.weight.grad.clone()


loss, merge_grad, item_emb_grad = main()
